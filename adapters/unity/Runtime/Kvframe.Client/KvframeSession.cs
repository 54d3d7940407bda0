using System;
using System.Text;
using System.Threading.Tasks;

namespace Kvframe.Client
{
    /// <summary>One game state on the server: frames in, queries about them. Numbers its
    /// frames itself (1, 2, ...), so they always increase as the protocol requires.</summary>
    public sealed class KvframeSession
    {
        private readonly object sending = new object(); // frame numbers go out in order
        private byte[] buffer = new byte[0];           // reused: a frame is re-sent every game frame
        private ulong lastFrame;

        public KvframeClient Client { get; }
        public ulong Id { get; }

        /// <summary>The number of the last frame sent (0: none yet); a query's DeadlineFrame counts from it.</summary>
        public ulong LastFrameNumber { get { lock (sending) return lastFrame; } }

        internal KvframeSession(KvframeClient client, ulong id)
        {
            Client = client;
            Id = id;
        }

        /// <summary>Sends the gamecore JSON (or a patch against the previous frame) and returns its
        /// frame number. Never blocks: the library copies it and sends it from its own thread.
        /// A frame the server rejects comes back as the client's Error event.</summary>
        public ulong SendFrame(string json, KvframeFrameFormat format = KvframeFrameFormat.Whole)
        {
            lock (sending)
            {
                int count = Encoding.UTF8.GetByteCount(json);
                if (buffer.Length < count) buffer = new byte[count + count / 2];
                Encoding.UTF8.GetBytes(json, 0, json.Length, buffer, 0);
                return SendFrame(buffer, count, format);
            }
        }

        /// <summary>SendFrame for JSON already encoded as UTF-8 (the first `count` bytes).</summary>
        public ulong SendFrame(byte[] utf8Json, int count, KvframeFrameFormat format = KvframeFrameFormat.Whole)
        {
            if (count < 0 || count > utf8Json.Length) throw new ArgumentOutOfRangeException("count");
            lock (sending)
            {
                ulong next = lastFrame + 1;
                Client.SendFrame(Id, next, format, utf8Json, count);
                return lastFrame = next;
            }
        }

        /// <summary>Asks about the session's state. The task completes inside a later Client.Poll()
        /// with the answer, or faults with a KvframeException carrying the server's code.
        /// onChunk (if given) streams the text as it is produced, in order, on the polling
        /// thread. Throws at once when the query cannot be sent.</summary>
        public Task<KvframeResult> QueryAsync(KvframeQuery query, Action<KvframeChunk> onChunk = null)
        {
            return Client.Query(Id, query, onChunk);
        }

        /// <summary>Closes the session on the server (the client's Dispose closes all of them).</summary>
        public Task CloseAsync()
        {
            return Client.CloseSessionAsync(Id);
        }
    }
}
