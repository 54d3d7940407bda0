// Tiny random-weight Llama-family models written as GGUF files, so model tests
// need no download. Shapes are small but keep every feature the real models
// have: GQA, tied or separate output, Qwen2 biases, llama3 RoPE factors, and a
// byte-level vocabulary with ChatML special tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::test {

struct TinyModelSpec {
  std::string arch = "llama";  // "llama", "qwen2", "qwen3" (QK norms), "gemma3" (QK and post norms, GeGLU,
                               // scaled embeddings, windows) or "phi3" (fused Q|K|V and gate|up, below)
  int64_t n_layer = 2;
  int64_t n_embd = 64;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t n_ff = 96;
  int64_t n_ctx = 512;
  float rope_base = 10000.0f;
  bool tied = true;
  bool qkv_bias = false;
  std::vector<float> rope_freq_factors;  // llama3 scaling (head_dim / 2 values) or empty
  runtime::GgmlType weight_type = runtime::GgmlType::kF32;  // F32, F16, BF16, Q8_0, Q4_0 or Q4_1
  uint32_t seed = 1;
  // gemma3: keys a local layer sees, and every sliding_window_pattern-th
  // layer global (0: no window, every layer global).
  int64_t sliding_window = 0;
  int64_t sliding_window_pattern = 2;
  float local_rope_base = 10000.0f;
  // phi3: rotated dimensions per head (0: all), LongRoPE's factors (rotated
  // dims / 2 values each, or empty) and attention factor (0: no key).
  int64_t rope_dims = 0;
  std::vector<float> rope_factors_short, rope_factors_long;
  float rope_attn_factor = 0.0f;
};

// The vocabulary: the 256 byte tokens of byte-level BPE, then <|endoftext|>,
// <|im_start|>, <|im_end|> (control tokens; eos = <|im_end|>).
inline constexpr int64_t kTinyVocab = 259;

std::vector<uint8_t> tiny_model_bytes(const TinyModelSpec& spec);

// Phi-3's shape: fused Q|K|V and gate|up, 12 of each head's 16 dimensions
// rotated, LongRoPE factors and attention factor (Phi-4-mini's variations).
TinyModelSpec phi3_shape();

}  // namespace kvframe::test
