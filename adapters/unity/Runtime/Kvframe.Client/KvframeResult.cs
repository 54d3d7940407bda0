using System.Runtime.InteropServices;

namespace Kvframe.Client
{
    /// <summary>A query's answer.</summary>
    public sealed class KvframeResult
    {
        public ulong RequestId { get; }
        public ulong SessionId { get; }
        /// <summary>The frame that was answered.</summary>
        public ulong FrameNumber { get; }
        /// <summary>The whole text (streamed or not).</summary>
        public string Text { get; }
        /// <summary>NpcAction queries: the action, valid against the query's OutputSchema; "" otherwise.</summary>
        public string ActionJson { get; }
        /// <summary>The same action parsed (Action.Get("amount").AsInt()); null when the result carries none.</summary>
        public KvframeActionValue Action { get; }
        /// <summary>Where the time went and what was reused.</summary>
        public KvframeReport Report { get; }

        internal KvframeResult(ulong requestId, ulong sessionId, ulong frameNumber, string text, string actionJson,
                               KvframeActionValue action, KvframeReport report)
        {
            RequestId = requestId;
            SessionId = sessionId;
            FrameNumber = frameNumber;
            Text = text;
            ActionJson = actionJson;
            Action = action;
            Report = report;
        }
    }

    /// <summary>One piece of a streamed answer, in order (Seq from 0); never splits a character.</summary>
    public struct KvframeChunk
    {
        public ulong RequestId { get; }
        public uint Seq { get; }
        public string Text { get; }
        /// <summary>The chunk ends a sentence (text-to-speech wants whole ones).</summary>
        public bool SentenceEnd { get; }

        internal KvframeChunk(ulong requestId, uint seq, string text, bool sentenceEnd)
        {
            RequestId = requestId;
            Seq = seq;
            Text = text;
            SentenceEnd = sentenceEnd;
        }
    }

    /// <summary>kvf_report, field for field (the native struct is read straight into it).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct KvframeReport
    {
        /// <summary>kvf_report's struct_size: the size of this struct, set before the native call.</summary>
        internal uint StructSize;
        public double PartitionMs, TokenizeMs, EncodeMs, RepositionMs, QueryPrefillMs;
        public double FirstTokenMs, DecodeMs, EngineMs, QueueMs, ServerMs;
        /// <summary>Measured by the client: send to Result.</summary>
        public double RoundTripMs;
        public long BlocksTotal, BlocksReused, BlocksEncoded, CacheHits, BlocksRepositioned;
        public long TokensEncoded, ContextTokens, QueryTokens, GeneratedTokens;
        public KvframeMode Mode;
        public KvframeStopReason StopReason;
        /// <summary>To the first streamed chunk; 0 when nothing was streamed.</summary>
        public double FirstChunkMs;
        /// <summary>Picking tokens within the output schema.</summary>
        public double MaskMs;
        /// <summary>Queries of the session decoded together with this one (many NPCs, one frame).</summary>
        public int BatchSize;
        /// <summary>Tokens encoded ahead, since the session's last query, for frames superseded before a query asked them.</summary>
        public long TokensEncodedSuperseded;
    }

    /// <summary>What the server said when the client connected.</summary>
    public sealed class KvframeServerInfo
    {
        public string ServerVersion { get; }
        public string Model { get; }
        public ulong MaxMessageBytes { get; }
        public uint MaxContext { get; }
        /// <summary>Random per server process: changes across restarts.</summary>
        public ulong InstanceId { get; }
        /// <summary>The LoRA adapters a session may name (KvframeSessionOptions.Adapter).</summary>
        public string[] Adapters { get; }
        /// <summary>The one a session naming none gets; "none": the base model.</summary>
        public string DefaultAdapter { get; }

        internal KvframeServerInfo(NativeMethods.ServerInfo info)
        {
            ServerVersion = Utf8.FromFixed(info.server_version);
            Model = Utf8.FromFixed(info.model);
            MaxMessageBytes = info.max_message_bytes;
            MaxContext = info.max_context;
            InstanceId = info.instance_id;
            string adapters = Utf8.FromFixed(info.adapters);
            Adapters = adapters.Length == 0 ? new string[0] : adapters.Split(',');
            DefaultAdapter = Utf8.FromFixed(info.default_adapter);
        }
    }
}
