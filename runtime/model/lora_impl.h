// LoraAdapter::Impl: the adapter's fp32 masters, and the form the forward
// pass applies them in — one (A, B) pair per fused projection of a layer
// (Q|K|V, O, gate|up, down; weights.h fuses the base projections alike), so
// an adapted projection costs two extra small matmuls whatever its parts.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"

namespace kvframe::runtime {

// Every projection kvframe adapts, named as GGUF names its tensor, in the
// order of lora_target_names(). A model has Q, K, V and gate, up apart, or
// (fused_in_file: phi3) attn_qkv holding Q|K|V and ffn_up holding gate|up,
// as its file stores them.
enum LoraTarget { kAttnQ, kAttnK, kAttnV, kAttnQkv, kAttnOutput, kFfnGate, kFfnUp, kFfnDown, kLoraTargets };
const std::string& lora_target_name(int target);

// Whether the model has the target as a tensor of its own.
bool has_lora_target(const ModelConfig& config, int target);
// Torch shape [out, in] of a target's base weight.
std::array<int64_t, 2> lora_target_shape(const ModelConfig& config, int target);

// delta(x) = (x A^T) B^T for one fused projection, the alpha / rank scale
// folded into B. Undefined when the adapter leaves every part alone.
struct FusedLora {
  at::Tensor a;  // [sum of the parts' ranks, in]
  at::Tensor b;  // [out, sum of ranks]: block-diagonal over the parts, zero rows for unadapted parts
  at::Tensor apply(const at::Tensor& x) const { return at::linear(at::linear(x, a), b); }
};
struct LayerLora {
  FusedLora qkv, o, gate_up, down;
};

struct LoraAdapter::Impl {
  struct Pair {
    at::Tensor a, b;  // fp32 masters: A [rank, in], B [out, rank]; undefined: not adapted
  };

  LoraParams params;
  std::string base_name;
  std::string arch;  // the base model's architecture (Q/K rows of 'llama' files are permuted on disk)
  int64_t n_layer = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
  bool fused_in_file = false;       // the targets are attn_qkv and ffn_up (gate|up), not their parts
  std::vector<int64_t> qkv_order;   // the loop's attn_qkv rows, by their row in the file (empty: the same)
  std::array<std::array<int64_t, 2>, kLoraTargets> shapes{};  // each target's base weight [out, in]
  std::vector<std::array<Pair, kLoraTargets>> layers;
  std::vector<at::Tensor> parameters;  // a then b of each pair, layer by layer, target by target
  std::vector<std::string> names;      // their GGUF tensor names

  // Takes the base model's shape (before layers are filled).
  void set_shape(const ModelConfig& config);
  // Collects parameters and names from layers (after they are filled).
  void index();
  // The fused pairs in `dtype`, built from the masters: differentiable
  // (training) and otherwise cached, per dtype, until a master changes (the
  // forward pass reads them in the compute dtype, the CPU step path in fp32).
  std::vector<LayerLora> fuse(at::ScalarType dtype) const;
  const std::vector<LayerLora>& fused(at::ScalarType dtype) const;

 private:
  struct Cached {
    at::ScalarType dtype;
    int64_t version;
    std::vector<LayerLora> layers;
  };
  mutable std::vector<Cached> cache_;
  int64_t version() const;
};

struct LoraAccess {
  static const LoraAdapter::Impl& of(const LoraAdapter& adapter) { return *adapter.impl_; }
};

}  // namespace kvframe::runtime
