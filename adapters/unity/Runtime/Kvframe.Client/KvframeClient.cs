using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading.Tasks;

namespace Kvframe.Client
{
    /// <summary>
    /// A connection to kvframe-serve (one native kvf_client: one socket, one background
    /// thread that does all socket I/O).
    ///
    /// Pump model: replies wait in the native queue until Poll() hands them out, on the
    /// thread that calls it. A game calls Poll() once per frame from its main loop
    /// (KvframeConnection.Update in Unity), so chunk handlers and the Error event run on
    /// the main thread; a console program calls Poll(timeoutMs) in a loop. Query tasks are
    /// completed inside Poll but their continuations never run inline: they go to the
    /// awaiting context (Unity's main thread) or the thread pool, so user code cannot
    /// re-enter Poll or dispose the client under it.
    ///
    /// Blocking native calls (connect, open/close session, stats) run on the thread pool
    /// behind the *Async methods; SendFrame, QueryAsync and Poll(0) never block.
    /// </summary>
    public sealed class KvframeClient : IDisposable
    {
        // Clients not yet disposed. Engines keep statics alive across play sessions
        // (Unity with domain reload off) and unload code under live native threads
        // (domain reload): their quit and reload hooks call CloseAll.
        private static readonly List<KvframeClient> live = new List<KvframeClient>();

        private readonly ClientHandle handle;
        private readonly object gate = new object(); // guards pending and closed
        private readonly Dictionary<ulong, PendingQuery> pending = new Dictionary<ulong, PendingQuery>();
        private volatile bool closed;

        /// <summary>A server Error not tied to a query: a rejected frame (BadJson, OutOfOrder, ...).
        /// Raised inside Poll().</summary>
        public event Action<KvframeException> Error;

        public bool IsClosed { get { return closed; } }

        /// <summary>Clients created and not yet disposed, process-wide.</summary>
        public static int LiveCount { get { lock (live) return live.Count; } }

        /// <summary>The C ABI version these bindings mirror: KVF_VERSION of kvframe_client.h
        /// (major * 10000 + minor * 100 + patch).</summary>
        public const int BindingsVersion = 600;

        /// <summary>The loaded native library's version (kvf_version): check at startup that it is
        /// at least BindingsVersion with the same major version. Every struct these bindings pass
        /// carries its size, so a newer library reads them as the older layout they are.</summary>
        public static int NativeVersion { get { return NativeMethods.kvf_version(IntPtr.Zero, IntPtr.Zero, IntPtr.Zero); } }

        private KvframeClient(ClientHandle handle)
        {
            this.handle = handle;
            lock (live) live.Add(this);
        }

        /// <summary>Connects on a worker thread: kvf_client_connect waits for the server's hello
        /// (ConnectTimeoutMs). Faults with KvframeException when it does not come.</summary>
        public static Task<KvframeClient> ConnectAsync(KvframeClientOptions options = null)
        {
            options = options ?? new KvframeClientOptions();
            return Task.Run(() =>
            {
                using (var arena = new Utf8.Arena())
                {
                    NativeMethods.ClientParams p = options.ToNative(arena);
                    ClientHandle handle;
                    NativeMethods.Check(NativeMethods.kvf_client_connect(ref p, out handle));
                    return new KvframeClient(handle);
                }
            });
        }

        /// <summary>Disposes every live client (engine quit, domain reload, leaving Play mode).</summary>
        public static void CloseAll()
        {
            KvframeClient[] clients;
            lock (live) clients = live.ToArray();
            foreach (KvframeClient client in clients) client.Dispose();
        }

        /// <summary>What the server said in its hello (empty before it did, with a lazy connect).</summary>
        public KvframeServerInfo GetServerInfo()
        {
            NativeMethods.ServerInfo info = new NativeMethods.ServerInfo();
            info.struct_size = (uint)Marshal.SizeOf(typeof(NativeMethods.ServerInfo));
            NativeMethods.Check(NativeMethods.kvf_client_server_info(handle, ref info));
            return new KvframeServerInfo(info);
        }

        public Task<KvframeSession> OpenSessionAsync(KvframeSessionOptions options = null)
        {
            options = options ?? new KvframeSessionOptions();
            ThrowIfClosed();
            return Task.Run(() =>
            {
                using (var arena = new Utf8.Arena())
                {
                    NativeMethods.SessionParams p = options.ToNative(arena);
                    ulong session;
                    NativeMethods.Check(NativeMethods.kvf_session_open(handle, ref p, out session));
                    return new KvframeSession(this, session);
                }
            });
        }

        /// <summary>The server's statistics as one JSON object.</summary>
        public Task<string> GetServerStatsJsonAsync()
        {
            ThrowIfClosed();
            return Task.Run(() =>
            {
                IntPtr json;
                NativeMethods.Check(NativeMethods.kvf_server_stats_json(handle, out json));
                try { return Utf8.FromNative(json); }
                finally { NativeMethods.kvf_string_free(json); }
            });
        }

        /// <summary>Hands out queued replies: completes query tasks, calls chunk handlers, raises
        /// Error. Waits up to timeoutMs for the first reply (0: not at all), then takes what is
        /// queued without waiting. Returns how many it handled; 0 once the client is disposed.
        /// An exception from a handler propagates; the replies after it stay queued.</summary>
        public int Poll(int timeoutMs = 0)
        {
            int handled = 0;
            IntPtr evt;
            while (!closed && NativeMethods.kvf_poll(handle, handled == 0 ? timeoutMs : 0, out evt) == KvframeStatus.Ok)
            {
                handled++;
                bool kept = false;
                try { kept = Dispatch(evt); }
                finally { if (!kept) NativeMethods.kvf_event_free(evt); }
            }
            return handled;
        }

        /// <summary>Closes the sessions on the server (bounded by 500 ms), stops the native thread
        /// and fails queries still waiting with KvframeStatus.Closed. Safe to call twice. When a
        /// blocking call is still running on a worker thread, the native close waits for it.</summary>
        public void Dispose()
        {
            List<PendingQuery> orphans;
            lock (gate)
            {
                if (closed) return;
                closed = true;
                orphans = new List<PendingQuery>(pending.Values);
                pending.Clear();
            }
            lock (live) live.Remove(this);
            handle.Dispose();
            var error = new KvframeException(KvframeStatus.Closed, "the client was closed");
            foreach (PendingQuery query in orphans) query.Completion.TrySetException(error);
        }

        internal void SendFrame(ulong session, ulong frameNumber, KvframeFrameFormat format, byte[] utf8Json, int count)
        {
            ThrowIfClosed();
            ulong requestId;
            NativeMethods.Check(NativeMethods.kvf_send_frame(handle, session, frameNumber, format, utf8Json,
                (UIntPtr)count, IntPtr.Zero, IntPtr.Zero, out requestId));
        }

        internal Task<KvframeResult> Query(ulong session, KvframeQuery query, Action<KvframeChunk> onChunk)
        {
            var waiting = new PendingQuery(onChunk);
            using (var arena = new Utf8.Arena())
            {
                NativeMethods.QueryParams p = query.ToNative(arena);
                if (onChunk != null) p.stream = 1;
                // Registered under the same lock as the send, so a Poll on another thread
                // cannot take the reply before the request is known.
                lock (gate)
                {
                    ThrowIfClosed();
                    ulong requestId;
                    NativeMethods.Check(NativeMethods.kvf_query(handle, session, ref p, IntPtr.Zero, IntPtr.Zero, out requestId));
                    pending.Add(requestId, waiting);
                }
            }
            return waiting.Completion.Task;
        }

        internal Task CloseSessionAsync(ulong session)
        {
            ThrowIfClosed();
            return Task.Run(() => NativeMethods.Check(NativeMethods.kvf_session_close(handle, session)));
        }

        /// <summary>Hands one event to its query or handler. True when it kept the event (a Result
        /// whose action a KvframeActionValue reads); the caller frees it otherwise.</summary>
        private bool Dispatch(IntPtr evt)
        {
            ulong requestId = NativeMethods.kvf_event_request_id(evt);
            switch (NativeMethods.kvf_event_type_of(evt))
            {
                case NativeMethods.EventType.Chunk:
                {
                    PendingQuery query = Find(requestId, false);
                    if (query != null && query.OnChunk != null)
                        query.OnChunk(new KvframeChunk(requestId, NativeMethods.kvf_event_chunk_seq(evt), Text(evt),
                                                       NativeMethods.kvf_event_sentence_end(evt) != 0));
                    break;
                }
                case NativeMethods.EventType.Result:
                {
                    PendingQuery query = Find(requestId, true);
                    if (query == null) break;
                    KvframeReport report = new KvframeReport();
                    report.StructSize = (uint)Marshal.SizeOf(typeof(KvframeReport));
                    NativeMethods.kvf_event_report(evt, ref report);
                    UIntPtr actionLength;
                    IntPtr actionJson = NativeMethods.kvf_event_action_json(evt, out actionLength);
                    NativeMethods.Value root;
                    EventHandle owner = null;
                    KvframeActionValue action = null;
                    if (NativeMethods.kvf_event_action(evt, out root) == KvframeStatus.Ok)
                    {
                        owner = new EventHandle();
                        action = new KvframeActionValue(owner, root);
                    }
                    var result = new KvframeResult(requestId, NativeMethods.kvf_event_session(evt),
                        NativeMethods.kvf_event_frame_number(evt), Text(evt), Utf8.FromNative(actionJson, actionLength),
                        action, report);
                    // Everything that could throw is done: from here the handle frees the event, not Poll.
                    if (owner != null) owner.Own(evt);
                    query.Completion.TrySetResult(result);
                    return owner != null;
                }
                case NativeMethods.EventType.Error:
                {
                    var error = new KvframeException(NativeMethods.kvf_event_error_code(evt), Text(evt),
                                                     NativeMethods.kvf_event_session(evt), requestId);
                    PendingQuery query = Find(requestId, true);
                    if (query != null) query.Completion.TrySetException(error);
                    else if (Error != null) Error(error);
                    break;
                }
                // Frame acks are discarded by the library: frames are sent without a callback.
            }
            return false;
        }

        private static string Text(IntPtr evt)
        {
            UIntPtr length;
            IntPtr text = NativeMethods.kvf_event_text(evt, out length);
            return Utf8.FromNative(text, length);
        }

        private PendingQuery Find(ulong requestId, bool remove)
        {
            lock (gate)
            {
                PendingQuery query;
                if (!pending.TryGetValue(requestId, out query)) return null;
                if (remove) pending.Remove(requestId);
                return query;
            }
        }

        private void ThrowIfClosed()
        {
            if (closed) throw new KvframeException(KvframeStatus.Closed, "the client is closed");
        }

        private sealed class PendingQuery
        {
            public readonly TaskCompletionSource<KvframeResult> Completion =
                new TaskCompletionSource<KvframeResult>(TaskCreationOptions.RunContinuationsAsynchronously);
            public readonly Action<KvframeChunk> OnChunk;

            public PendingQuery(Action<KvframeChunk> onChunk) { OnChunk = onChunk; }
        }
    }
}
