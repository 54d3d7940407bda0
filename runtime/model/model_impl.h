// Model::Impl: the loaded model, shared by the forward pass (model.cpp),
// block attention's encoder (block_encoder.cpp) and branch decoding
// (branches.cpp); the latter two batch ragged rows (grouped_attention.h). Shapes: n new tokens, L keys,
// H query heads, KH key/value heads (GQA: H = KH * G), d head size.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kvframe/runtime/model.h"
#include "weights.h"

namespace kvframe::runtime {

struct Group;  // grouped_attention.h

struct Model::Impl {
  ModelConfig config;
  Weights weights;
  Rope rope;
  at::Device device;
  at::ScalarType dtype;

  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
    // In fp32 whatever the compute dtype, as the reference does.
    at::Tensor x32 = x.to(at::kFloat);
    at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + config.rms_eps);
    return (normed * weight).to(dtype);
  }

  // x + SwiGLU(rms(x)): the second half of every layer.
  at::Tensor feed_forward(const LayerWeights& w, const at::Tensor& x) const {
    at::Tensor gate_up = at::linear(rms_norm(x, w.ffn_norm), w.w_gate_up);
    at::Tensor gate = gate_up.narrow(1, 0, config.n_ff), up = gate_up.narrow(1, config.n_ff, config.n_ff);
    return x + at::linear(at::silu(gate) * up, w.w_down);
  }

  // The forward pass (model.cpp).
  Result<at::Tensor> forward(const at::Tensor& tokens, KvCache& cache, bool all_logits) const;
  at::Tensor layer(const LayerWeights& w, at::Tensor x, KvCache& cache, int64_t l, const Rope::Table& rope_table,
                   const at::Tensor& padding) const;
  at::Tensor attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, int64_t start,
                       const at::Tensor& padding) const;
  at::Tensor attention_chunk(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                             const at::Tensor& padding) const;

  // Block attention's encoder (block_encoder.cpp).
  Result<std::vector<BlockKv>> encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                             const KvCache* context) const;

  // Branch decoding (branches.cpp).
  Result<BranchCache> new_branches(const KvCache& shared, int64_t branches, int64_t capacity) const;
  Result<at::Tensor> forward_branches(const std::vector<std::vector<int32_t>>& tokens, const KvCache& shared,
                                      BranchCache& branches) const;

  // What the batched paths share (grouped_attention.cpp). The rest of layer l
  // over a packed batch once its queries q [T, H, d] are rotated: x + Wo ·
  // attention of every group (over `context`'s visible entries, nullptr:
  // none, and the own keys and values own_kv(g) gives, [KH, B, keys, d]),
  // then the FFN.
  using OwnKv = std::function<std::pair<at::Tensor, at::Tensor>(const Group&)>;
  at::Tensor grouped_attention_and_ffn(const LayerWeights& w, const at::Tensor& x, const at::Tensor& q,
                                       const std::vector<Group>& groups, const KvCache* context, int64_t l,
                                       const OwnKv& own_kv) const;
  // kInvalidArgument naming "<what> i" for a token id of row i outside the vocabulary.
  Status check_ids(const std::vector<std::vector<int32_t>>& rows, const std::string& what) const;
  // kInvalidArgument unless `cache` is a KV cache of this model (layers,
  // length, device; padding as check_padding); `what` names it.
  Status check_cache(const KvCache& cache, const std::string& what) const;

  // kInvalidArgument unless cache.padding is undefined or bool [capacity] on
  // the cache's device.
  Status check_padding(const KvCache& cache) const;
};

// libtorch reports failures (out of memory above all) by throwing; the public
// API returns them as kBackend.
Error backend_error(const c10::Error& e, const std::string& doing);

}  // namespace kvframe::runtime
