#include "tiny_model.h"

#include <random>

#include "byte_level_text.h"
#include "gguf_writer.h"

namespace kvframe::test {
namespace {

class RandomTensors {
 public:
  RandomTensors(GgufWriter& writer, uint32_t seed, runtime::GgmlType type)
      : writer_(writer), rng_(seed), type_(type) {}

  // dims in ggml order. Values ~ N(mean, scale).
  void add(const std::string& name, std::vector<int64_t> dims, float scale, float mean = 0.0f,
           bool keep_fp32 = false) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::normal_distribution<float> normal(mean, scale);
    std::vector<float> values(static_cast<size_t>(n));
    for (float& v : values) v = normal(rng_);
    writer_.add_tensor_f32(name, dims, values, keep_fp32 ? runtime::GgmlType::kF32 : type_);
  }

 private:
  GgufWriter& writer_;
  std::mt19937 rng_;
  runtime::GgmlType type_;
};

}  // namespace

std::vector<uint8_t> tiny_model_bytes(const TinyModelSpec& s) {
  GgufWriter w;
  const std::string a = s.arch + ".";
  w.add_string("general.architecture", s.arch);
  w.add_string("general.name", "tiny-" + s.arch);
  w.add_u32(a + "block_count", static_cast<uint32_t>(s.n_layer));
  w.add_u32(a + "context_length", static_cast<uint32_t>(s.n_ctx));
  w.add_u32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.add_u32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.add_u32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.add_u32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.add_u32(a + "vocab_size", static_cast<uint32_t>(kTinyVocab));
  w.add_f32(a + "rope.freq_base", s.rope_base);
  w.add_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  if (s.arch == "phi3" && s.sliding_window > 0) {  // Phi-3-mini-4k's key (kvframe refuses it)
    w.add_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
  }
  if (s.arch == "gemma3" && s.sliding_window > 0) {
    w.add_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.sliding_window));
    w.add_u32(a + "attention.sliding_window_pattern", static_cast<uint32_t>(s.sliding_window_pattern));
    w.add_f32(a + "rope.freq_base_swa", s.local_rope_base);
  }

  if (s.rope_dims > 0) w.add_u32(a + "rope.dimension_count", static_cast<uint32_t>(s.rope_dims));
  if (s.rope_attn_factor > 0.0f) {
    w.add_f32(a + "rope.scaling.attn_factor", s.rope_attn_factor);
    w.add_u32(a + "rope.scaling.original_context_length", static_cast<uint32_t>(s.n_ctx / 4));
  }

  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(byte_level_text(std::string(1, static_cast<char>(b))));
    types.push_back(1);  // normal
  }
  for (const char* special : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    tokens.push_back(special);
    types.push_back(3);  // control
  }
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "smollm");
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  w.add_i32_array("tokenizer.ggml.token_type", types);
  w.add_string_array("tokenizer.ggml.merges", {});
  w.add_u32("tokenizer.ggml.bos_token_id", 257);
  w.add_u32("tokenizer.ggml.eos_token_id", 258);

  const int64_t hd = s.n_embd / s.n_head, V = kTinyVocab, E = s.n_embd;
  RandomTensors r(w, s.seed, s.weight_type);
  r.add("token_embd.weight", {E, V}, 1.0f);
  r.add("output_norm.weight", {E}, 0.1f, 1.0f, true);
  if (!s.tied) r.add("output.weight", {E, V}, 0.2f);
  if (!s.rope_freq_factors.empty()) {
    w.add_tensor_f32("rope_freqs.weight", {hd / 2}, s.rope_freq_factors);
  }
  const int64_t rope_pairs = (s.rope_dims > 0 ? s.rope_dims : hd) / 2;
  if (!s.rope_factors_long.empty()) w.add_tensor_f32("rope_factors_long.weight", {rope_pairs}, s.rope_factors_long);
  if (!s.rope_factors_short.empty()) w.add_tensor_f32("rope_factors_short.weight", {rope_pairs}, s.rope_factors_short);
  const bool fused = s.arch == "phi3";  // as convert_hf_to_gguf.py writes Phi-3
  const float in_scale = 1.0f / static_cast<float>(E) * 4.0f;
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    r.add(p + "attn_norm.weight", {E}, 0.1f, 1.0f, true);
    if (fused) {
      r.add(p + "attn_qkv.weight", {E, (s.n_head + 2 * s.n_head_kv) * hd}, in_scale);
    } else {
      r.add(p + "attn_q.weight", {E, s.n_head * hd}, in_scale);
      r.add(p + "attn_k.weight", {E, s.n_head_kv * hd}, in_scale);
      r.add(p + "attn_v.weight", {E, s.n_head_kv * hd}, in_scale);
    }
    if (s.qkv_bias) {
      r.add(p + "attn_q.bias", {s.n_head * hd}, 0.1f, 0.0f, true);
      r.add(p + "attn_k.bias", {s.n_head_kv * hd}, 0.1f, 0.0f, true);
      r.add(p + "attn_v.bias", {s.n_head_kv * hd}, 0.1f, 0.0f, true);
    }
    if (s.arch == "qwen3" || s.arch == "gemma3") {
      r.add(p + "attn_q_norm.weight", {hd}, 0.1f, 1.0f, true);
      r.add(p + "attn_k_norm.weight", {hd}, 0.1f, 1.0f, true);
    }
    r.add(p + "attn_output.weight", {s.n_head * hd, E}, in_scale);
    r.add(p + "ffn_norm.weight", {E}, 0.1f, 1.0f, true);
    if (s.arch == "gemma3") {
      r.add(p + "post_attention_norm.weight", {E}, 0.1f, 1.0f, true);
      r.add(p + "post_ffw_norm.weight", {E}, 0.1f, 1.0f, true);
    }
    if (fused) {
      r.add(p + "ffn_up.weight", {E, 2 * s.n_ff}, in_scale);  // gate rows, then up rows
    } else {
      r.add(p + "ffn_gate.weight", {E, s.n_ff}, in_scale);
      r.add(p + "ffn_up.weight", {E, s.n_ff}, in_scale);
    }
    r.add(p + "ffn_down.weight", {s.n_ff, E}, in_scale);
  }
  return w.bytes();
}

TinyModelSpec phi3_shape() {
  TinyModelSpec phi3;
  phi3.arch = "phi3", phi3.rope_dims = 12, phi3.rope_attn_factor = 1.19f;
  for (int i = 0; i < 6; ++i) {
    phi3.rope_factors_short.push_back(1.0f + 0.25f * static_cast<float>(i));
    phi3.rope_factors_long.push_back(4.0f + static_cast<float>(i));
  }
  return phi3;
}

}  // namespace kvframe::test
