// The model's one forward pass. Every way through the model — a prefill or a
// decoding step into a KV cache (model.cpp), block attention's encoder
// (block_encoder.cpp), batched branches (branches.cpp) and training
// (training.cpp) — runs Model::Impl::run over a packed batch of tokens:
//
//   x = embed(ids)
//   per layer:  q, k, v = Wqkv · rms(x)            (+ the adapter, when it applies)
//               x += Wo · plan.attend(l, rope(q), rope(k), k, v)
//               x += Wdown · (silu(Wgate · rms(x)) * Wup · rms(x))
//
// What differs between the paths is only the attention plan: which keys each
// token may see, at which positions, and where its keys and values go.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace kvframe::runtime {

class AttentionPlan {
 public:
  virtual ~AttentionPlan() = default;
  // Layer l's attention for the packed tokens: q [T, H, d] and k [T, KH, d]
  // rotated at the tokens' positions (in one pass over both), k_raw the keys
  // before RoPE (for a plan that stores them, or places them elsewhere),
  // v [T, KH, d]. Returns [T, H d], or an undefined tensor to end the pass
  // after this layer's keys and values (block encoding needs nothing more of
  // the last layer).
  virtual at::Tensor attend(int64_t layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                            const at::Tensor& v) = 0;
  // Asked after attend(layer): undefined when every token goes on, else the
  // int64 indices (ascending, into this layer's T rows) of the tokens that
  // go on — attend() then returned those rows only. A plan that refreshes
  // some tokens through every layer but only needs the others' first layers
  // (the block engine's deviation-selected recompute) narrows the pass here.
  virtual at::Tensor rows_after(int64_t /*layer*/) { return {}; }
};

}  // namespace kvframe::runtime
