// Parameters of connecting and of opening a session. Each starts from the
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

    public sealed class KvframeSessionOptions
    {
        private NativeMethods.SessionParams native = NativeMethods.DefaultSessionParams();

        /// <summary>Free text for the server's logs and stats ("holdem").</summary>
        public string GameId { get; set; }
        /// <summary>json_blocker rules (docs/json_blocker.md); null: the defaults.</summary>
        public string RulesJson { get; set; }
        public KvframeMode Mode { get { return native.mode; } set { native.mode = value; } }
        /// <summary>null: the model's default system prompt.</summary>
        public string SystemPrompt { get; set; }
        /// <summary>The session's KV budget in tokens; 0: the server's default.</summary>
        public uint ContextTokens { get { return native.context_tokens; } set { native.context_tokens = value; } }
        /// <summary>Block mode's fidelity knob: re-encode the first N tokens of each changed block in context; -1: the server's default, 0: off.</summary>
        public int BlockHeads { get { return native.block_heads; } set { native.block_heads = value; } }
        /// <summary>Block mode's other fidelity knob: the share (0..1) of each changed block's tokens, those the context moved most, recomputed in context; -1: the server's default, 0: off.</summary>
        public float BlendRatio { get { return native.blend_ratio; } set { native.blend_ratio = value; } }
        /// <summary>Block mode's third fidelity knob: attention logits against block keys divided by this temperature (0.25..4); -1: the server's default, 1: off.</summary>
        public float BlockTemperature { get { return native.block_temperature; } set { native.block_temperature = value; } }
        /// <summary>The LoRA adapter the session's model runs with: a name the server loaded
        /// (KvframeServerInfo.Adapters), "none" (the base model); null: the server's default.</summary>
        public string Adapter { get; set; }

        internal NativeMethods.SessionParams ToNative(Utf8.Arena arena)
        {
            NativeMethods.SessionParams p = native;
            if (Adapter != null) p.adapter = arena.Add(Adapter);
            if (GameId != null) p.game_id = arena.Add(GameId);
            if (RulesJson != null) p.rules_json = arena.Add(RulesJson);
            if (SystemPrompt != null) p.system_prompt = arena.Add(SystemPrompt);
            return p;
        }
    }
}
