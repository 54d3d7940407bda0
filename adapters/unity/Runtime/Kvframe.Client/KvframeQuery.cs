using System;

namespace Kvframe.Client
{
    /// <summary>One question about a session's game state. Starts from the library's
    /// defaults (kvf_query_params_init: text, 64 tokens, greedy).</summary>
    public sealed class KvframeQuery
    {
        private NativeMethods.QueryParams native = NativeMethods.DefaultQueryParams();

        public KvframeQuery(string instruction, KvframeTaskKind kind = KvframeTaskKind.Text)
        {
            Instruction = instruction;
            Kind = kind;
        }

        /// <summary>The final block of the prompt: what to do now. Required.</summary>
        public string Instruction { get; set; }
        public KvframeTaskKind Kind { get { return native.kind; } set { native.kind = value; } }
        /// <summary>Who acts. Only labels the server's debug log line for the query: the prompt,
        /// batching and stats do not use it (say who acts in the Instruction).</summary>
        public string NpcId { get; set; }
        /// <summary>NpcAction: the JSON Schema the action must satisfy.</summary>
        public string OutputSchema { get; set; }
        public uint MaxTokens { get { return native.max_tokens; } set { native.max_tokens = value; } }
        /// <summary>0: greedy.</summary>
        public float Temperature { get { return native.temperature; } set { native.temperature = value; } }
        public int TopK { get { return native.top_k; } set { native.top_k = value; } }
        public float TopP { get { return native.top_p; } set { native.top_p = value; } }
        public ulong Seed { get { return native.seed; } set { native.seed = value; } }
        /// <summary>Stop strings (Text and Commentary).</summary>
        public string[] Stop { get; set; }
        /// <summary>Ask for chunks as text is produced. QueryAsync sets it when given a chunk handler.</summary>
        public bool Stream { get { return native.stream != 0; } set { native.stream = value ? 1 : 0; } }
        /// <summary>The frame this query is about; 0: the latest sent.</summary>
        public ulong FrameNumber { get { return native.frame_number; } set { native.frame_number = value; } }
        /// <summary>Answer within this many ms of the server receiving it, or fail with Deadline at once; 0: none.</summary>
        public uint DeadlineMs { get { return native.deadline_ms; } set { native.deadline_ms = value; } }
        /// <summary>The answer is moot once the session receives this frame number; 0: none.</summary>
        public ulong DeadlineFrame { get { return native.deadline_frame; } set { native.deadline_frame = value; } }

        internal NativeMethods.QueryParams ToNative(Utf8.Arena arena)
        {
            if (Instruction == null) throw new ArgumentNullException("Instruction");
            NativeMethods.QueryParams p = native;
            p.instruction = arena.Add(Instruction);
            if (NpcId != null) p.npc_id = arena.Add(NpcId);
            if (OutputSchema != null) p.output_schema = arena.Add(OutputSchema);
            if (Stop != null)
            {
                p.stop = arena.AddArray(Stop);
                p.stop_count = (UIntPtr)Stop.Length;
            }
            return p;
        }
    }
}
