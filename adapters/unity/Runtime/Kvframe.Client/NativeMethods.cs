// P/Invoke declarations of libkvframe_client (include/kvframe/client/kvframe_client.h).
//
// "kvframe_client" resolves to kvframe_client.dll, libkvframe_client.so or
// libkvframe_client.dylib (Unity and mono add the platform's prefix and
// suffix). No callback is ever passed: replies are polled (kvf_poll), so no
// native thread calls into managed code and IL2CPP needs no
// [MonoPInvokeCallback] thunks.
//
// Strings go in as UTF-8 the caller allocates (Utf8.Arena) and come out as
// pointers decoded with their length (Utf8.FromNative), never through the
// marshaller's ANSI/UTF-16 defaults.
using System;
using System.Runtime.InteropServices;

namespace Kvframe.Client
{
    internal static partial class NativeMethods
    {
        private const string Library = "kvframe_client";

        [StructLayout(LayoutKind.Sequential)]
        internal struct ClientParams
        {
            public uint struct_size;
            public IntPtr endpoint;
            public IntPtr client_name;
            public int connect_timeout_ms;
            public int request_timeout_ms;
            public IntPtr server_public_key;
            public IntPtr client_public_key;
            public IntPtr client_secret_key;
            public IntPtr zmq_context;  // always IntPtr.Zero: the client's own context
        }

        // SessionParams and QueryParams: KvframeOptions.Generated.cs (protocol/options.json).

        [StructLayout(LayoutKind.Sequential)]
        internal struct ServerInfo
        {
            public uint struct_size;  // set before the call: Marshal.SizeOf(typeof(ServerInfo))
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = 32)] public byte[] server_version;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = 128)] public byte[] model;
            public ulong max_message_bytes;
            public uint max_context;
            public ulong instance_id;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = 256)] public byte[] adapters;
            [MarshalAs(UnmanagedType.ByValArray, SizeConst = 64)] public byte[] default_adapter;
        }

        /// <summary>kvf_value: a view into an event's bytes (private fields, copied as is).</summary>
        [StructLayout(LayoutKind.Sequential)]
        internal struct Value
        {
            public IntPtr owner;
            public ulong ref0, ref1;
        }

        internal enum EventType { FrameAck = 0, Chunk = 1, Result = 2, Error = 3 }

        // The library's defaults, sized as these mirrors declare the structs (a
        // newer library fills only the fields they have; it cannot fail).
        internal static ClientParams DefaultClientParams()
        {
            ClientParams p;
            kvf_client_params_init(out p, (UIntPtr)Marshal.SizeOf(typeof(ClientParams)));
            return p;
        }

        internal static SessionParams DefaultSessionParams()
        {
            SessionParams p;
            kvf_session_params_init(out p, (UIntPtr)Marshal.SizeOf(typeof(SessionParams)));
            return p;
        }

        internal static QueryParams DefaultQueryParams()
        {
            QueryParams p;
            kvf_query_params_init(out p, (UIntPtr)Marshal.SizeOf(typeof(QueryParams)));
            return p;
        }

        [DllImport(Library)] internal static extern IntPtr kvf_client_last_error(IntPtr client);
        [DllImport(Library)] internal static extern int kvf_version(IntPtr major, IntPtr minor, IntPtr patch);

        [DllImport(Library)] private static extern KvframeStatus kvf_client_params_init(out ClientParams p, UIntPtr size);
        [DllImport(Library)] internal static extern KvframeStatus kvf_client_connect(ref ClientParams p, out ClientHandle client);
        [DllImport(Library)] internal static extern void kvf_client_close(IntPtr client);
        [DllImport(Library)] internal static extern KvframeStatus kvf_client_server_info(ClientHandle client, ref ServerInfo info);

        [DllImport(Library)] private static extern KvframeStatus kvf_session_params_init(out SessionParams p, UIntPtr size);
        [DllImport(Library)] internal static extern KvframeStatus kvf_session_open(ClientHandle client, ref SessionParams p, out ulong session);
        [DllImport(Library)] internal static extern KvframeStatus kvf_session_close(ClientHandle client, ulong session);

        [DllImport(Library)]
        internal static extern KvframeStatus kvf_send_frame(ClientHandle client, ulong session, ulong frameNumber,
            KvframeFrameFormat format, [In] byte[] json, UIntPtr jsonLen, IntPtr callback, IntPtr user, out ulong requestId);

        [DllImport(Library)] private static extern KvframeStatus kvf_query_params_init(out QueryParams p, UIntPtr size);
        [DllImport(Library)]
        internal static extern KvframeStatus kvf_query(ClientHandle client, ulong session, ref QueryParams p,
            IntPtr callback, IntPtr user, out ulong requestId);

        [DllImport(Library)] internal static extern KvframeStatus kvf_poll(ClientHandle client, int timeoutMs, out IntPtr evt);
        [DllImport(Library)] internal static extern void kvf_event_free(IntPtr evt);
        [DllImport(Library)] internal static extern EventType kvf_event_type_of(IntPtr evt);
        [DllImport(Library)] internal static extern ulong kvf_event_request_id(IntPtr evt);
        [DllImport(Library)] internal static extern ulong kvf_event_session(IntPtr evt);
        [DllImport(Library)] internal static extern ulong kvf_event_frame_number(IntPtr evt);
        [DllImport(Library)] internal static extern IntPtr kvf_event_text(IntPtr evt, out UIntPtr len);
        [DllImport(Library)] internal static extern IntPtr kvf_event_action_json(IntPtr evt, out UIntPtr len);
        [DllImport(Library)] internal static extern KvframeStatus kvf_event_error_code(IntPtr evt);
        [DllImport(Library)] internal static extern uint kvf_event_chunk_seq(IntPtr evt);
        [DllImport(Library)] internal static extern int kvf_event_sentence_end(IntPtr evt);
        [DllImport(Library)] internal static extern KvframeStatus kvf_event_report(IntPtr evt, ref KvframeReport report);

        [DllImport(Library)] internal static extern KvframeStatus kvf_event_action(IntPtr evt, out Value root);
        [DllImport(Library)] internal static extern KvframeValueType kvf_value_type_of(ref Value value);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_get(ref Value value, [In] byte[] path, out Value found);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_as_bool(ref Value value, out int result);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_as_int(ref Value value, out long result);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_as_double(ref Value value, out double result);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_as_string(ref Value value, out IntPtr text, out UIntPtr len);
        [DllImport(Library)] internal static extern UIntPtr kvf_value_size(ref Value value);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_at(ref Value value, UIntPtr index, out Value element);
        [DllImport(Library)] internal static extern KvframeStatus kvf_value_key_at(ref Value value, UIntPtr index, out IntPtr key, out UIntPtr len);

        [DllImport(Library)] internal static extern KvframeStatus kvf_server_stats_json(ClientHandle client, out IntPtr json);
        [DllImport(Library)] internal static extern void kvf_string_free(IntPtr text);

        /// <summary>Throws a KvframeException with the calling thread's last error unless status is Ok.
        /// Call on the thread that made the failed call: the native last error is thread-local.</summary>
        internal static void Check(KvframeStatus status)
        {
            if (status != KvframeStatus.Ok)
                throw new KvframeException(status, Utf8.FromNative(kvf_client_last_error(IntPtr.Zero)));
        }
    }

    /// <summary>Owns a kvf_client*. SafeHandle's reference count keeps the client alive while
    /// any P/Invoke call uses it, so Dispose() during a blocking call (a session opening on a
    /// worker thread) defers kvf_client_close until that call returns instead of freeing the
    /// client under it; the critical finalizer closes a client nobody disposed.</summary>
    internal sealed class ClientHandle : SafeHandle
    {
        // Only the marshaller calls it (for `out ClientHandle`): keep IL2CPP's stripping off it.
        [Preserve]
        private ClientHandle() : base(IntPtr.Zero, true) { }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override bool ReleaseHandle()
        {
            NativeMethods.kvf_client_close(handle);
            return true;
        }
    }

    /// <summary>Owns a kvf_event* kept past Poll: a Result whose action KvframeActionValue
    /// reads in place. Freed by the critical finalizer once nothing references it.</summary>
    internal sealed class EventHandle : SafeHandle
    {
        internal EventHandle() : base(IntPtr.Zero, true) { }

        /// <summary>Takes the event over (cannot fail).</summary>
        internal void Own(IntPtr evt) { SetHandle(evt); }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override bool ReleaseHandle()
        {
            NativeMethods.kvf_event_free(handle);
            return true;
        }
    }

    /// <summary>Unity's managed code stripping keeps members marked with any attribute of this
    /// name, so the package needs no UnityEngine reference for it.</summary>
    [AttributeUsage(AttributeTargets.All, Inherited = false)]
    internal sealed class PreserveAttribute : Attribute { }
}
