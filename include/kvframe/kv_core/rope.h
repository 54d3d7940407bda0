// Rotary position embedding (RoPE) — kvframe's one convention.
//
// HALF-SPLIT PAIRS: within each head of size d, element i is rotated together
// with element i + d/2 (i < d/2), by the angle  position * inv_freq[i],
//   inv_freq[i] = freq_base^(-2i/d) / freq_factor[i]
// This is the "NeoX" / Hugging Face rotate_half layout.
//
// Why this one: Qwen2 GGUF files already use it, and for 'llama' files the
// GGUF converter permuted Q/K rows so that pairs are interleaved (2i, 2i+1);
// the loader undoes that permutation once, at load time (see weights.cpp), so
// every architecture runs the same rotation and the rotation is a pair of
// contiguous half-vectors (cheap in libtorch: no strided gathers).
//
// PARTIAL ROTARY (Phi-3: rope.dimension_count r < d): the file's heads
// rotate pairs (i, i + r/2) for i < r/2 and pass the last d - r elements
// through. The loader reorders Q/K rows (weights.cpp, qk_row_order) so those
// pairs land at (i, i + d/2) and the passed-through elements fill the other
// pairs, whose inv_freq is 0: the one rotation above, with angles of 0 there.
//
// kv_diff re-rotates cached keys with the same pairing: RoPE angles add, so a
// key encoded at position p moves to position p + delta by rotate(k, delta).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace kvframe::runtime {

struct RopeParams {
  int64_t head_dim = 64;              // dimensions per head (even)
  int64_t rotary_dims = 0;            // partial rotary: the rotated ones (even, < head_dim); 0: all
  double freq_base = 10000.0;         // {arch}.rope.freq_base
  double linear_scale = 1.0;          // {arch}.rope.scaling.factor for "linear" scaling
  std::vector<float> freq_factors;    // llama3 / LongRoPE: per-frequency divisors (rotated dims / 2), or empty
  // LongRoPE's attention factor ({arch}.rope.scaling.attn_factor): llama.cpp
  // multiplies cos and sin by it, so the rotated dimensions of q and of k
  // each grow by it. The forward pass scales q's rotated dimensions by its
  // square instead (Rope::query_scale): the same scores, and every key stays
  // a pure rotation, which kv_diff moves by rotating it again.
  double attn_factor = 1.0;
  int64_t rotated() const { return rotary_dims > 0 ? rotary_dims : head_dim; }
  // Gemma 3's local (sliding-window) layers rotate with a base of their own,
  // without scaling or factors ({arch}.rope.freq_base_swa). Per layer: true
  // for a local one; empty: every layer rotates as above.
  double local_freq_base = 10000.0;
  std::vector<bool> local_layers;
  bool is_local(int64_t layer) const {
    return !local_layers.empty() && local_layers[static_cast<size_t>(layer)];
  }
};

class Rope {
 public:
  explicit Rope(const RopeParams& params);

  const RopeParams& params() const { return params_; }
  // inv_freq as above, fp32, length head_dim / 2 (CPU); inv_freq(true) the
  // local layers' (the same tensor when the model has none).
  const at::Tensor& inv_freq(bool local = false) const { return local && local_inv_freq_.defined() ? local_inv_freq_ : inv_freq_; }
  // fp32 [head_dim] (CPU): attn_factor^2 at the rotated dimensions, 1
  // elsewhere, which the forward pass multiplies each query head by;
  // undefined when attn_factor is 1.
  const at::Tensor& query_scale() const { return query_scale_; }

  // cos and sin tables for these positions: each [n, head_dim / 2], on the
  // positions' device, computed in fp32 and stored as `dtype` (the dtype
  // apply() rotates in: a model passes its compute dtype, so the forward
  // pass converts the table once, not in every layer). Positions are int64
  // and may be any values (block attention encodes blocks at arbitrary offsets).
  struct Table {
    at::Tensor cos, sin;
    // On CUDA also [n, head_dim] (cos, cos) and (-sin, sin): apply() then
    // rotates in three kernels instead of seven (launches are what short
    // passes wait on there).
    at::Tensor cos_full, sin_signed;
    // The same positions at the local layers' base (null without one).
    std::shared_ptr<const Table> local;
    // The table of the chosen rows only (rows: int64 indices).
    Table rows(const at::Tensor& rows) const;
    // The table layer kind `local` rotates with.
    const Table& of(bool local_layer) const { return local_layer && local ? *local : *this; }
  };
  Table table(const at::Tensor& positions, at::ScalarType dtype = at::kFloat) const;
  // The same with inv_freq() already on the positions' device: a caller that
  // keeps that copy makes no host-to-device copy (which a CUDA graph cannot
  // capture).
  static Table table(const at::Tensor& positions, const at::Tensor& inv_freq, at::ScalarType dtype);

  // x: [n, heads, head_dim] (any float dtype); row r is rotated by table row r.
  // Returns the rotated tensor (same shape and dtype).
  static at::Tensor apply(const at::Tensor& x, const Table& table);

  // Convenience for kv_diff: rotate x [n, heads, head_dim] by `delta`
  // positions (rows may have different deltas: delta is [n] int64), as
  // `layer` rotates (its base: global unless the layer is local).
  at::Tensor rotate(const at::Tensor& x, const at::Tensor& delta, int64_t layer = 0) const;

 private:
  RopeParams params_;
  at::Tensor inv_freq_, local_inv_freq_, query_scale_;
};

}  // namespace kvframe::runtime
