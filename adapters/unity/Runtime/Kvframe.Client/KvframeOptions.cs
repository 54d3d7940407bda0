// Parameters of connecting (a session's: KvframeOptions.Generated.cs). Each starts from the
// native library's defaults (kvf_*_params_init), so the defaults live in
// one place; a string left null keeps the library's default.
namespace Kvframe.Client
{
    public sealed class KvframeClientOptions
    {
        private NativeMethods.ClientParams native = NativeMethods.DefaultClientParams();

        /// <summary>ZeroMQ endpoint of kvframe-serve; null: the library default (tcp://127.0.0.1:5555).</summary>
        public string Endpoint { get; set; }
        /// <summary>Shown in the server's log; null: the library default.</summary>
        public string ClientName { get; set; }
        /// <summary>How long ConnectAsync waits for the server's hello; 0: connect lazily.</summary>
        public int ConnectTimeoutMs { get { return native.connect_timeout_ms; } set { native.connect_timeout_ms = value; } }
        /// <summary>A request with no reply by then fails with KvframeStatus.Timeout; 0: never.</summary>
        public int RequestTimeoutMs { get { return native.request_timeout_ms; } set { native.request_timeout_ms = value; } }
        /// <summary>CURVE encryption: all three Z85 keys (40 characters each) or none.</summary>
        public string ServerPublicKey { get; set; }
        public string ClientPublicKey { get; set; }
        public string ClientSecretKey { get; set; }

        internal NativeMethods.ClientParams ToNative(Utf8.Arena arena)
        {
            NativeMethods.ClientParams p = native;
            if (Endpoint != null) p.endpoint = arena.Add(Endpoint);
            if (ClientName != null) p.client_name = arena.Add(ClientName);
            if (ServerPublicKey != null) p.server_public_key = arena.Add(ServerPublicKey);
            if (ClientPublicKey != null) p.client_public_key = arena.Add(ClientPublicKey);
            if (ClientSecretKey != null) p.client_secret_key = arena.Add(ClientSecretKey);
            return p;
        }
    }

    // KvframeSessionOptions: KvframeOptions.Generated.cs (protocol/options.json).
}
