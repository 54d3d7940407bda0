// Hyperparameters from GGUF metadata. Keys are "{arch}.<name>" as written by
// llama.cpp's convert_hf_to_gguf.py.
#include <algorithm>
#include <cmath>
#include <string>

#include "kvframe/runtime/model.h"

namespace kvframe::runtime {
namespace {

// Architectures whose tensors and hyperparameters this decoder covers.
// Mistral and SmolLM2 convert as 'llama', Llama 3.2 too (llama3 RoPE scaling).
bool supported_arch(const std::string& arch) {
  return arch == "llama" || arch == "qwen2" || arch == "qwen3" || arch == "gemma3" || arch == "phi3";
}

Error bad_value(const std::string& key, const std::string& why) {
  return {ErrorCode::kCorrupt, "metadata '" + key + "' " + why + "; the file is damaged or not a decoder model"};
}

// Gemma 3's variations of the layer loop, as llama.cpp reads them
// (src/models/gemma3.cpp): local layers in a repeating pattern whose last
// layer is global, a RoPE base of their own, scaled embeddings, QK and post
// norms, GeGLU.
Status read_gemma3(const GgufFile& file, ModelConfig& c) {
  const std::string p = c.arch + ".";
  if (c.n_layer == 62) {
    return Error{ErrorCode::kUnsupportedArch, "Gemma 3 27B scales attention by n_embd / n_head, not the head size; "
                                              "kvframe runs the 270M to 12B shapes"};
  }
  if (auto cap = file.get_float(p + "final_logit_softcapping"); cap && *cap != 0.0) {
    return Error{ErrorCode::kUnsupportedArch, "'" + p + "final_logit_softcapping' is set; kvframe runs Gemma 3 without it"};
  }
  c.qk_norm = c.post_norms = true;
  c.gate = ModelConfig::Gate::kGeluTanh;
  c.embed_scale = std::sqrt(static_cast<double>(c.n_embd));
  auto window = file.get_int(p + "attention.sliding_window");
  if (!window || *window <= 0) return {};  // every layer global
  c.sliding_window = *window;
  int64_t pattern = 6;  // llama.cpp's default for gemma3
  if (file.find(p + "attention.sliding_window_pattern")) {
    auto value = file.get_int(p + "attention.sliding_window_pattern");
    if (!value) {
      return Error{ErrorCode::kUnsupportedArch, "'" + p + "attention.sliding_window_pattern' is not one integer "
                                                "(a per-layer list is not supported)"};
    }
    if (*value < 0 || *value > c.n_layer) return bad_value(p + "attention.sliding_window_pattern", "is out of range");
    pattern = *value;
  }
  c.rope.local_layers.resize(static_cast<size_t>(c.n_layer));
  for (int64_t l = 0; l < c.n_layer; ++l) {
    c.rope.local_layers[static_cast<size_t>(l)] = pattern == 0 || l % pattern < pattern - 1;
  }
  if (auto local_base = file.get_float(p + "rope.freq_base_swa")) c.rope.local_freq_base = *local_base;
  return {};
}

// Phi-3 / Phi-4-mini's variations, as llama.cpp reads them
// (src/models/phi3.cpp): Q|K|V and gate|up fused in the file, partial
// rotary (rope.dimension_count, read above), LongRoPE factors (model.cpp
// reads the set chosen here) and its attention factor, which llama.cpp
// applies with either set.
Status read_phi3(const GgufFile& file, int64_t context, ModelConfig& c) {
  const std::string p = c.arch + ".";
  // llama.cpp ignores a Phi sliding window (its phi3.cpp turns it off) where
  // transformers applies it: no one answer to match, so such files are refused.
  if (auto window = file.get_int(p + "attention.sliding_window"); window && *window > 0) {
    return Error{ErrorCode::kUnsupportedArch, "'" + p + "attention.sliding_window' is " + std::to_string(*window) +
                                                  "; kvframe runs phi3 files without a sliding window (Phi-4-mini)"};
  }
  for (const char* bias : {"blk.0.attn_qkv.bias", "blk.0.attn_output.bias"}) {
    if (file.find_tensor(bias)) {
      return Error{ErrorCode::kUnsupportedArch, std::string("tensor '") + bias + "' is present; kvframe runs phi3 "
                                                "files without attention biases"};
    }
  }
  c.fused_in_file = true;
  if (auto factor = file.get_float(p + "rope.scaling.attn_factor")) {
    if (!(*factor > 0.0 && *factor < 16.0)) return bad_value(p + "rope.scaling.attn_factor", "is out of range");
    c.rope.attn_factor = *factor;
  }
  auto original = file.get_int(p + "rope.scaling.original_context_length");
  if (!original) return {};
  if (*original <= 0) return bad_value(p + "rope.scaling.original_context_length", "is not positive");
  c.rope_original_context = *original;
  // llama.cpp takes the long factors when its context per sequence, rounded
  // up to a multiple of 256 (llama_context does), exceeds the original
  // length, the short ones otherwise (llama_model::get_rope_factors).
  constexpr int64_t kContextPadding = 256;
  const int64_t padded = (context + kContextPadding - 1) / kContextPadding * kContextPadding;
  c.long_rope = padded > *original;
  if (!c.long_rope) c.n_ctx_train = std::min(c.n_ctx_train, *original);
  return {};
}

}  // namespace

int64_t ModelConfig::matmul_params() const {
  const int64_t attn = n_embd * head_dim * (n_head + 2 * n_head_kv) + n_head * head_dim * n_embd;
  const int64_t ffn = 3 * n_embd * n_ff;
  return n_layer * (attn + ffn) + n_vocab * n_embd;
}

Result<ModelConfig> read_model_config(const GgufFile& file, int64_t context) {
  if (context < 0) {
    return Error{ErrorCode::kInvalidArgument, "a model is loaded for a context of 0 or more tokens, not " +
                                                  std::to_string(context)};
  }
  ModelConfig c;
  auto arch = file.get_string("general.architecture");
  if (!arch) return arch.error();
  c.arch = *arch;
  if (!supported_arch(c.arch)) {
    return Error{ErrorCode::kUnsupportedArch,
                 "general.architecture is '" + c.arch +
                     "'; kvframe runs 'llama' (Llama, Mistral, SmolLM2, Llama 3.2), 'qwen2', 'qwen3', 'gemma3' and 'phi3' files"};
  }
  auto name = file.get_string("general.name");
  c.name = name ? *name : c.arch;

  const std::string p = c.arch + ".";
  // Required integers, each > 0.
  struct IntKey {
    const char* key;
    int64_t* out;
  };
  for (auto [key, out] : {IntKey{"block_count", &c.n_layer}, IntKey{"embedding_length", &c.n_embd},
                          IntKey{"attention.head_count", &c.n_head},
                          IntKey{"feed_forward_length", &c.n_ff},
                          IntKey{"context_length", &c.n_ctx_train}}) {
    auto v = file.get_int(p + key);
    if (!v) return v.error();
    if (*v <= 0 || *v > (int64_t{1} << 24)) return bad_value(p + key, "is " + std::to_string(*v));
    *out = *v;
  }
  auto kv_heads = file.get_int(p + "attention.head_count_kv");
  c.n_head_kv = kv_heads ? *kv_heads : c.n_head;  // absent: plain multi-head attention
  if (c.n_head_kv <= 0 || c.n_head % c.n_head_kv != 0) {
    return bad_value(p + "attention.head_count_kv",
                     "(" + std::to_string(c.n_head_kv) + ") does not divide the head count " +
                         std::to_string(c.n_head));
  }
  auto key_length = file.get_int(p + "attention.key_length");
  c.head_dim = key_length ? *key_length : c.n_embd / c.n_head;
  if (c.head_dim <= 0 || c.head_dim % 2 != 0) return bad_value(p + "attention.key_length", "is not a positive even number");

  auto eps = file.get_float(p + "attention.layer_norm_rms_epsilon");
  if (!eps) return eps.error();
  c.rms_eps = *eps;

  // Vocabulary size: {arch}.vocab_size, else the tokenizer's token list.
  if (auto vocab = file.get_int(p + "vocab_size")) {
    c.n_vocab = *vocab;
  } else if (auto tokens = file.get_string_array("tokenizer.ggml.tokens")) {
    c.n_vocab = static_cast<int64_t>(tokens->size());
  } else {
    return Error{ErrorCode::kMissingKey, "neither '" + p + "vocab_size' nor 'tokenizer.ggml.tokens' is present"};
  }

  c.rope.head_dim = c.head_dim;
  if (auto rope_dims = file.get_int(p + "rope.dimension_count"); rope_dims && *rope_dims != c.head_dim) {
    if (c.arch != "phi3") {
      return Error{ErrorCode::kUnsupportedArch, "partial rotary embedding (" + p + "rope.dimension_count = " +
                                                    std::to_string(*rope_dims) + " < head size " +
                                                    std::to_string(c.head_dim) + ") is supported for phi3 only"};
    }
    if (*rope_dims <= 0 || *rope_dims > c.head_dim || *rope_dims % 2 != 0) {
      return bad_value(p + "rope.dimension_count", "is not an even number from 2 to the head size");
    }
    c.rope.rotary_dims = *rope_dims;
  }
  auto base = file.get_float(p + "rope.freq_base");
  c.rope.freq_base = base ? *base : 10000.0;
  if (auto scaling = file.get_string(p + "rope.scaling.type"); scaling && *scaling != "none") {
    if (*scaling != "linear") {
      return Error{ErrorCode::kUnsupportedArch,
                   "RoPE scaling '" + *scaling + "' (" + p + "rope.scaling.type) is not supported; "
                   "kvframe supports none, linear and llama3 (rope_freqs.weight)"};
    }
    auto factor = file.get_float(p + "rope.scaling.factor");
    if (!factor) return factor.error();
    c.rope.linear_scale = *factor;
  }

  c.tied_embeddings = file.find_tensor("output.weight") == nullptr;
  c.qkv_bias = file.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.qk_norm = c.arch == "qwen3";
  if (c.arch == "gemma3") {
    if (Status gemma = read_gemma3(file, c); !gemma.ok()) return gemma.error();
  }
  if (c.arch == "phi3") {
    if (Status phi = read_phi3(file, context, c); !phi.ok()) return phi.error();
  }
  return c;
}

}  // namespace kvframe::runtime
