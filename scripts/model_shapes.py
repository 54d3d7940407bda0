"""The real shapes (hyperparameters) of the models kvframe is checked and timed
at, for the random-weight GGUF writers: scripts/random-model-gguf.py (every
architecture, quantized by llama.cpp) and scripts/device/random-model-gguf.py
(Llama-architecture ones, stdlib only, on a GPU host). Data only, so either
can import it anywhere."""

# Hyperparameters as the HF config.json of each model gives them and
# llama.cpp's convert_hf_to_gguf.py writes them ("{arch}.<key>").
SHAPES = {
    # Qwen/Qwen3-0.6B: hidden_size 1024, intermediate_size 3072, 28 layers,
    # 16 heads, 8 KV heads, head_dim 128 (so q is 2048 wide, more than the
    # model), vocab 151936, rope_theta 1e6, rms_norm_eps 1e-6,
    # max_position_embeddings 40960, tie_word_embeddings true, QK norms.
    "qwen3-0.6b": dict(arch="qwen3", name="Qwen3 0.6B (random weights)", n_layer=28, n_embd=1024, n_head=16,
                       n_head_kv=8, head_dim=128, n_ff=3072, n_vocab=151936, rope_base=1e6, rms_eps=1e-6,
                       n_ctx=40960, tokenizer="qwen2"),
    # meta-llama/Llama-3.2-1B: hidden_size 2048, intermediate_size 8192, 16
    # layers, 32 heads, 8 KV heads (head_dim 64), vocab 128256, rope_theta
    # 500000, rms_norm_eps 1e-5, max_position_embeddings 131072,
    # tie_word_embeddings true, rope_scaling {rope_type llama3, factor 32,
    # low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings
    # 8192}: written as the tensor rope_freqs.weight (no rope.scaling.* keys),
    # as convert_hf_to_gguf.py does.
    "llama3.2-1b": dict(arch="llama", name="Llama 3.2 1B (random weights)", n_layer=16, n_embd=2048, n_head=32,
                        n_head_kv=8, head_dim=64, n_ff=8192, n_vocab=128256, rope_base=500000.0, rms_eps=1e-5,
                        n_ctx=131072, tokenizer="llama-bpe",
                        llama3_rope=dict(factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                         original_max_position_embeddings=8192)),
    # meta-llama/Llama-3.2-3B: hidden_size 3072, intermediate_size 8192, 28
    # layers, 24 heads, 8 KV heads (head_dim 128), the rest as the 1B.
    "llama3.2-3b": dict(arch="llama", name="Llama 3.2 3B (random weights)", n_layer=28, n_embd=3072, n_head=24,
                        n_head_kv=8, head_dim=128, n_ff=8192, n_vocab=128256, rope_base=500000.0, rms_eps=1e-5,
                        n_ctx=131072, tokenizer="llama-bpe",
                        llama3_rope=dict(factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                         original_max_position_embeddings=8192)),
    # meta-llama/Llama-3.1-8B: hidden_size 4096, intermediate_size 14336, 32
    # layers, 32 heads, 8 KV heads (head_dim 128), vocab 128256, rope_theta
    # 500000, rope_scaling llama3 factor 8 (low 1, high 4, original 8192),
    # tie_word_embeddings false: an output.weight of its own.
    "llama3.1-8b": dict(arch="llama", name="Llama 3.1 8B (random weights)", n_layer=32, n_embd=4096, n_head=32,
                        n_head_kv=8, head_dim=128, n_ff=14336, n_vocab=128256, rope_base=500000.0, rms_eps=1e-5,
                        n_ctx=131072, tokenizer="llama-bpe", untied=True,
                        llama3_rope=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                         original_max_position_embeddings=8192)),
    # google/gemma-3-1b-pt: hidden_size 1152, intermediate_size 6912, 26
    # layers, 4 heads, 1 KV head, head_dim 256 (query_pre_attn_scalar 256),
    # vocab 262144, sliding_window 512 with sliding_window_pattern 6 (five
    # local layers, then a global one), rope_theta 1e6 (global),
    # rope_local_base_freq 10000, rope_scaling null, rms_norm_eps 1e-6,
    # max_position_embeddings 32768, no final logit softcapping. Keys as in
    # the real Gemma 3 270M file: no sliding_window_pattern, no
    # rope.freq_base_swa (llama.cpp defaults them to 6 and 10000).
    "gemma3-1b": dict(arch="gemma3", name="Gemma 3 1B (random weights)", n_layer=26, n_embd=1152, n_head=4,
                      n_head_kv=1, head_dim=256, n_ff=6912, n_vocab=262144, rope_base=1e6, rms_eps=1e-6,
                      n_ctx=32768, sliding_window=512, tokenizer="gemma3"),
    # microsoft/Phi-4-mini-instruct: hidden_size 3072, intermediate_size 8192,
    # 32 layers, 24 heads, 8 KV heads (head_dim 128), partial_rotary_factor
    # 0.75 (96 of 128 dimensions rotated), vocab 200064, rope_theta 10000,
    # rms_norm_eps 1e-5, max_position_embeddings 131072,
    # original_max_position_embeddings 4096, rope_scaling longrope,
    # tie_word_embeddings true, no sliding window (written as 0, as
    # convert_hf_to_gguf.py does for Phi-4). Q|K|V and gate|up fused in the file.
    "phi4-mini": dict(arch="phi3", name="Phi 4 mini (random weights)", n_layer=32, n_embd=3072, n_head=24,
                      n_head_kv=8, head_dim=128, n_ff=8192, n_vocab=200064, rope_base=10000.0, rms_eps=1e-5,
                      n_ctx=131072, tokenizer="gpt-4o", rope_dims=96, original_context=4096),
}
SHAPES["phi4-mini-4l"] = dict(SHAPES["phi4-mini"], n_layer=4, name="Phi 4 mini, 4 layers (random weights)")
# The 1B shape for the game case: its synthetic vocabulary cuts text into bytes,
# three to four times the tokens Llama 3's own tokenizer makes of the same
# JSON. This one takes the default model's byte-level BPE (SmolLM2's 49,152
# tokens and merges; fillers to Llama 3's specials) so a frame and a question
# are about as many tokens as with the real file. Same weights.
SHAPES["llama3.2-1b-text"] = dict(SHAPES["llama3.2-1b"], text_bpe=True,
                                  name="Llama 3.2 1B (random weights, SmolLM2's BPE for text)")
