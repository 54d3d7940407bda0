// Batched attention over ragged rows of new tokens (grouped_attention.cpp),
// shared by block attention's encoder (block_encoder.cpp: each row a block,
// with no earlier entries of its own), branch decoding (branches.cpp: each
// row a branch's new tokens, after the branch's earlier entries) and
// training (training.cpp: a sample's prefix, blocks and query).
//
// All rows' tokens are packed into one [T, n_embd] sequence, so embeddings,
// norms and the QKV / output / FFN matmuls run once over all of them. Only
// attention has to keep the rows apart: rows of similar length form groups,
// each group's queries are gathered into padded [B, Lmax] slots and run one
// batched attention per layer over
//   - the shared context's visible keys (one [KH, S, d] tensor for every
//     row of every group: never copied per row), and
//   - each row's own keys, causally: the `prefix` entries it already holds,
//     then its new tokens (padding slots and future positions masked),
// with one fp32 softmax per query over both, and the real rows are gathered
// back into the packed order.
//
// Packed order is the rows sorted by length, longest first (stable), so each
// group's real tokens are one contiguous run of the packed sequence.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "forward_pass.h"
#include "kvframe/runtime/model.h"

namespace kvframe::runtime {

// Score elements one batched attention may hold (B H rows (S + keys)): groups
// are split, and a lone row too long for it runs in chunks of query rows.
inline constexpr int64_t kScoreBudget = int64_t{1} << 26;

struct AttentionShape {
  int64_t H, KH, d;
  at::ScalarType dtype;
  // Per layer, true where attention is windowed (plan_groups' window); null: none.
  const std::vector<bool>* local_layers = nullptr;
  int64_t window = 0;  // what a windowed layer's query sees: its last `window` entries
  bool local(int64_t layer) const { return local_layers && !local_layers->empty() && (*local_layers)[static_cast<size_t>(layer)]; }
};

// The shape of `config`'s attention in `dtype`, its local layers windowed
// (pair with plan_groups(..., config.sliding_window)).
inline AttentionShape attention_shape(const ModelConfig& config, at::ScalarType dtype) {
  return {config.n_head, config.n_head_kv, config.head_dim, dtype, &config.rope.local_layers, config.sliding_window};
}

// Ragged rows in packed order. Rows with no tokens are left out of `order`.
struct PackedRows {
  std::vector<int64_t> lengths;   // per row (input order): new tokens
  std::vector<int64_t> prefixes;  // per row: own entries before the new tokens
  std::vector<size_t> order;      // the non-empty rows, longest first
  std::vector<int64_t> starts;    // per row: its first packed token
  std::vector<int64_t> ids;       // [T] token ids, packed
  std::vector<int64_t> positions; // [T] first_position + prefix + t, packed
  int64_t tokens() const { return static_cast<int64_t>(ids.size()); }
};
PackedRows pack_rows(const std::vector<std::vector<int32_t>>& rows, std::vector<int64_t> prefixes,
                     int64_t first_position);

// One group of B rows padded to [B, Lmax], and what its attention needs,
// built once and reused by every layer.
struct Group {
  int64_t B = 0, Lmax = 0;
  int64_t keys = 0;     // own keys the group reads: max over its rows of prefix + length
  at::Tensor members;   // [B] int64: each slot row's input index
  at::Tensor gather;    // [B Lmax] int64: the packed token in each slot (padding slots repeat a real one)
  at::Tensor real;      // [tokens] int64: the slots holding real tokens, in packed order
  at::Tensor context_padding;  // undefined or bool [S], true = masked: the context's padding
  // Per slot row: its first packed token, its new tokens, its own entries before them.
  std::vector<int64_t> row_starts, row_lengths, row_prefixes;
  // Query slots [r0, r0 + rows) per attention call, reading the first `keys`
  // own keys, each with its mask of those keys [B, 1, rows, keys], true =
  // masked: future positions, and for padding slots the keys past the row's end.
  // Windowed (local) layers use local_mask, which also masks own keys
  // `window` or more positions back, and context_local_mask [B, 1, rows, S]
  // for the context's; either undefined where the window masks nothing more.
  struct Chunk {
    int64_t r0, rows, keys;
    at::Tensor mask, local_mask, context_local_mask;
  };
  std::vector<Chunk> chunks;
};

// Groups over p's rows in packed order; S context keys, of which
// context_padding (undefined or bool [S]) masks some. window > 0: the
// chunks' local masks for windowed layers, where a query sees the `window`
// positions up to its own; the context's entries are its positions
// (entry s sits `S - s` positions before a row's first own entry).
std::vector<Group> plan_groups(const PackedRows& p, int64_t S, const at::Tensor& context_padding, int64_t H,
                               at::Device device, int64_t window = 0);

// One layer's attention for one group: through cpu_attention where it runs
// (each row as it would be alone, which is how CachePlan computes a query's
// final block of a vector of rows or more), else the explicit path above.
// q [T, H, d]: the packed queries (rotated); own_k, own_v [KH, B, >= g.keys,
// d]: each slot row's own keys (rotated) and values, entry j of a row at
// index j; ctx_k, ctx_v [KH, S, d] or undefined; local: the layer is
// windowed. Returns the group's real rows [tokens, H d], in packed order.
at::Tensor group_attention(const Group& g, const at::Tensor& q, const at::Tensor& own_k, const at::Tensor& own_v,
                           const at::Tensor& ctx_k, const at::Tensor& ctx_v, const AttentionShape& s,
                           bool local = false);

// Slots [KH, B, Lmax, d] of group g filled from packed rows t [T, KH, d]
// (each row's own keys or values when they are this pass's new tokens alone).
at::Tensor gather_slots(const Group& g, const at::Tensor& t);

// The attention plan of ragged rows: per layer, each group's queries over the
// context's visible entries (read from `context`; none when null) and the
// row's own keys and values, which own_kv gives (keys rotated at the tokens'
// positions, as the forward pass hands them over).
class RowsPlan : public AttentionPlan {
 public:
  RowsPlan(std::vector<Group> groups, const KvCache* context, const AttentionShape& shape)
      : groups_(std::move(groups)), context_(context), shape_(shape) {}
  at::Tensor attend(int64_t layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                    const at::Tensor& v) final;

 protected:
  // Called first in every layer with the packed keys, un-rotated and rotated,
  // and values (to store them). False ends the pass after this layer.
  virtual bool keep(int64_t /*layer*/, const at::Tensor& /*k_raw*/, const at::Tensor& /*k*/,
                    const at::Tensor& /*v*/) {
    return true;
  }
  // Group g's own keys and values [KH, B, >= g.keys, d]. By default this
  // pass's new tokens, gathered into the group's slots.
  virtual std::pair<at::Tensor, at::Tensor> own_kv(int64_t /*layer*/, const Group& g, const at::Tensor& k,
                                                   const at::Tensor& v) {
    return {gather_slots(g, k), gather_slots(g, v)};
  }

 private:
  std::vector<Group> groups_;
  const KvCache* context_;
  AttentionShape shape_;
};

// Softmax over the last dimension in fp32 whatever the dtype, returned in `dtype`.
inline at::Tensor softmax_fp32(const at::Tensor& scores, at::ScalarType dtype) {
  return at::softmax(scores, -1, at::kFloat).to(dtype);
}

}  // namespace kvframe::runtime
