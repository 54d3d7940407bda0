// Block attention's encoder (Model::encode_blocks): every block of a frame
// through the model in one pass.
//
// All blocks' tokens are packed into one [T, n_embd] sequence, so embeddings,
// norms and the QKV / output / FFN matmuls run once over all of them. Only
// attention has to keep the blocks apart: blocks of similar length form
// groups, each group is gathered into padded [B, Lmax] tensors and runs one
// batched attention per layer (causal within each block, padding slots
// masked), over the shared context's keys too, and the real rows are
// gathered back into the packed order.
//
// Packed order is the blocks sorted by length, longest first, so each group's
// real tokens are one contiguous run of the packed sequence.
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

// A group is padded to its longest block; it takes shorter blocks while its
// slots stay within this many per real token (padded query rows cost a full
// pass over the context's keys, so waste is kept low).
constexpr double kMaxSlotsPerToken = 1.25;
// Score elements one batched attention may hold (B H rows (S + Lmax)): groups
// are split, and a lone block too long for it runs in chunks of query rows.
constexpr int64_t kScoreBudget = int64_t{1} << 26;

struct AttentionShape {
  int64_t H, KH, d;
  at::ScalarType dtype;
};

// One group of B blocks padded to [B, Lmax], and what its attention needs,
// built once and reused by every layer.
struct Group {
  int64_t B = 0, Lmax = 0;
  at::Tensor gather;  // [B Lmax] int64: the packed token in each slot (padding slots repeat a real one)
  at::Tensor real;    // [tokens] int64: the slots holding real tokens, in packed order
  // Query rows [r0, r0 + rows) per attention call, each with its mask
  // [B, 1, rows, S + r0 + rows], true = masked: the context's padding, then
  // the block's own keys (future positions and padding slots).
  struct Chunk {
    int64_t r0, rows;
    at::Tensor mask;
  };
  std::vector<Chunk> chunks;
};

// Groups over the blocks in packed order (lengths[order[i]] descending;
// starts[b]: block b's first packed token).
std::vector<Group> plan_groups(const std::vector<int64_t>& lengths, const std::vector<size_t>& order,
                               const std::vector<int64_t>& starts, int64_t S, const at::Tensor& context_padding,
                               int64_t H, at::Device device) {
  const auto longs = at::TensorOptions(at::kLong).device(device);
  std::vector<Group> groups;
  for (size_t i = 0; i < order.size();) {
    const int64_t Lmax = lengths[order[i]];
    const int64_t max_blocks = std::max<int64_t>(1, kScoreBudget / (H * Lmax * (S + Lmax)));
    size_t end = i + 1;
    int64_t tokens = Lmax;
    // Lengths only fall from here, so the first block that would pad too much ends the group.
    while (end < order.size() && static_cast<int64_t>(end - i) < max_blocks) {
      const auto slots = static_cast<double>(static_cast<int64_t>(end - i + 1) * Lmax);
      if (slots > kMaxSlotsPerToken * static_cast<double>(tokens + lengths[order[end]])) break;
      tokens += lengths[order[end++]];
    }

    Group g;
    g.B = static_cast<int64_t>(end - i);
    g.Lmax = Lmax;
    std::vector<int64_t> gather, real, block_lengths;
    for (size_t m = i; m < end; ++m) {
      const int64_t n = lengths[order[m]], slot0 = static_cast<int64_t>(m - i) * Lmax;
      block_lengths.push_back(n);
      for (int64_t t = 0; t < Lmax; ++t) gather.push_back(starts[order[m]] + std::min(t, n - 1));
      for (int64_t t = 0; t < n; ++t) real.push_back(slot0 + t);
    }
    g.gather = at::tensor(gather, at::kLong).to(device);
    g.real = at::tensor(real, at::kLong).to(device);

    const int64_t rows = std::clamp<int64_t>(kScoreBudget / (g.B * H * (S + Lmax)), 1, Lmax);
    const at::Tensor n_b = at::tensor(block_lengths, at::kLong).to(device).view({g.B, 1, 1});
    for (int64_t r0 = 0; r0 < Lmax; r0 += rows) {
      const int64_t r = std::min(rows, Lmax - r0), keys = r0 + r;
      at::Tensor query = at::arange(r0, r0 + r, longs).view({1, r, 1});
      at::Tensor key = at::arange(0, keys, longs).view({1, 1, keys});
      at::Tensor mask = (key > query) | (key >= n_b);  // [B, r, keys]
      if (S > 0) {
        at::Tensor ctx = context_padding.defined()
                             ? context_padding.view({1, 1, S}).expand({g.B, r, S})
                             : at::zeros({g.B, r, S}, at::TensorOptions(at::kBool).device(device));
        mask = at::cat({ctx, mask}, 2);
      }
      g.chunks.push_back({r0, r, mask.unsqueeze(1)});
    }
    groups.push_back(std::move(g));
    i = end;
  }
  return groups;
}

// One layer's attention for one group. q [T, H, d], k and v [T, KH, d]: the
// packed sequence (q and k rotated); ctx_k, ctx_v [KH, S, d] or undefined.
// Returns the group's real rows [tokens, H d], in packed order.
at::Tensor group_attention(const Group& g, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const at::Tensor& ctx_k, const at::Tensor& ctx_v, const AttentionShape& s) {
  const int64_t B = g.B, Lmax = g.Lmax, H = s.H, KH = s.KH, G = H / KH, d = s.d;
  const int64_t S = ctx_k.defined() ? ctx_k.size(1) : 0;
  // As in the forward pass, query head h reads KV head h / G: query rows are
  // laid out [KH, B, G, rows] so one matmul per KV head covers the context
  // (shared by all blocks, never copied) and one per (KV head, block) the
  // block's own keys.
  at::Tensor qg = (q.index_select(0, g.gather) * (1.0 / std::sqrt(static_cast<double>(d))))
                      .view({B, Lmax, KH, G, d})
                      .permute({2, 0, 3, 1, 4});  // [KH, B, G, Lmax, d]
  at::Tensor kg = k.index_select(0, g.gather).view({B, Lmax, KH, d}).permute({2, 0, 1, 3});  // [KH, B, Lmax, d]
  at::Tensor vg = v.index_select(0, g.gather).view({B, Lmax, KH, d}).permute({2, 0, 1, 3});

  std::vector<at::Tensor> parts;
  for (const Group::Chunk& c : g.chunks) {
    const int64_t M = B * G * c.rows, keys = c.r0 + c.rows;
    at::Tensor qc = qg.narrow(3, c.r0, c.rows).reshape({KH, M, d});
    at::Tensor kc = kg.narrow(2, 0, keys).reshape({KH * B, keys, d});
    at::Tensor vc = vg.narrow(2, 0, keys).reshape({KH * B, keys, d});
    at::Tensor scores = at::bmm(qc.reshape({KH * B, G * c.rows, d}), kc.transpose(1, 2)).view({KH, M, keys});
    if (S > 0) scores = at::cat({at::matmul(qc, ctx_k.transpose(1, 2)), scores}, 2);
    scores.view({KH, B, G, c.rows, S + keys}).masked_fill_(c.mask, -INFINITY);
    at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(s.dtype);  // softmax in fp32 whatever the dtype
    at::Tensor out = at::bmm(probs.narrow(2, S, keys).reshape({KH * B, G * c.rows, keys}), vc).view({KH, M, d});
    if (S > 0) out = out + at::matmul(probs.narrow(2, 0, S), ctx_v);
    parts.push_back(out.view({KH, B, G, c.rows, d}));
  }
  at::Tensor out = parts.size() == 1 ? parts[0] : at::cat(parts, 3);  // [KH, B, G, Lmax, d]
  return out.permute({1, 3, 0, 2, 4}).reshape({B * Lmax, H * d}).index_select(0, g.real);
}

}  // namespace

Result<std::vector<BlockKv>> Model::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                  const KvCache* context) const {
  try {
    return impl_->encode_blocks(blocks, context);
  } catch (const c10::Error& e) {
    return backend_error(e, "encoding " + std::to_string(blocks.size()) + " blocks");
  }
}

Result<std::vector<BlockKv>> Model::Impl::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                        const KvCache* context) const {
  const int64_t n_layer = config.n_layer, H = config.n_head, KH = config.n_head_kv, d = config.head_dim;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const std::string name = "block " + std::to_string(b);
    if (blocks[b].empty()) return Error{ErrorCode::kInvalidArgument, name + " has no tokens"};
    for (int32_t id : blocks[b]) {
      if (id < 0 || id >= config.n_vocab) {
        return Error{ErrorCode::kInvalidArgument, name + ": token id " + std::to_string(id) +
                                                      " outside the vocabulary [0, " +
                                                      std::to_string(config.n_vocab) + ")"};
      }
    }
  }
  if (blocks.empty()) return std::vector<BlockKv>{};
  int64_t S = 0;
  if (context) {
    if (static_cast<int64_t>(context->k.size()) != n_layer || context->length < 0 ||
        context->length > context->capacity || context->k[0].device().type() != device.type()) {
      return Error{ErrorCode::kInvalidArgument, "the context is not a KV cache of this model (use Model::new_cache)"};
    }
    if (auto bad = check_padding(*context)) return *bad;
    S = context->length;
  }
  c10::InferenceMode inference;  // no autograd bookkeeping

  // Packed order: longest blocks first (stable, so equal lengths keep input order).
  std::vector<int64_t> lengths;
  for (const auto& block : blocks) lengths.push_back(static_cast<int64_t>(block.size()));
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  std::vector<int64_t> starts(blocks.size()), ids, positions;
  const int64_t first_position = context ? context->next_position : 0;
  for (size_t b : order) {
    starts[b] = static_cast<int64_t>(ids.size());
    for (size_t t = 0; t < blocks[b].size(); ++t) {
      ids.push_back(blocks[b][t]);
      positions.push_back(first_position + static_cast<int64_t>(t));
    }
  }
  const auto T = static_cast<int64_t>(ids.size());

  at::Tensor context_padding;
  if (S > 0 && context->padding.defined()) context_padding = context->padding.narrow(0, 0, S);
  const std::vector<Group> groups = plan_groups(lengths, order, starts, S, context_padding, H, device);
  const Rope::Table rope_table = rope.table(at::tensor(positions, at::kLong).to(device));
  const AttentionShape shape{H, KH, d, dtype};
  // Keys before RoPE and values, per layer: [n_layer, KH, T, d].
  const auto options = at::TensorOptions(dtype).device(device);
  at::Tensor all_k = at::empty({n_layer, KH, T, d}, options), all_v = at::empty({n_layer, KH, T, d}, options);

  at::Tensor x = weights.embed.index_select(0, at::tensor(ids, at::kLong).to(device));
  for (int64_t l = 0; l < n_layer; ++l) {
    const LayerWeights& w = weights.layers[l];
    // Nothing reads the last layer's output: it needs keys and values only, so
    // its query rows of the fused projection are skipped and it ends there.
    const bool last = l == n_layer - 1;
    const int64_t skip = last ? H * d : 0;
    at::Tensor qkv = at::linear(rms_norm(x, w.attn_norm), w.wqkv.narrow(0, skip, w.wqkv.size(0) - skip),
                                w.bqkv.defined() ? w.bqkv.narrow(0, skip, w.bqkv.size(0) - skip) : at::Tensor());
    at::Tensor k = qkv.narrow(1, H * d - skip, KH * d).view({T, KH, d});
    at::Tensor v = qkv.narrow(1, (H + KH) * d - skip, KH * d).view({T, KH, d});
    all_k[l].copy_(k.transpose(0, 1));
    all_v[l].copy_(v.transpose(0, 1));
    if (last) break;

    at::Tensor q = Rope::apply(qkv.narrow(1, 0, H * d).view({T, H, d}), rope_table);
    k = Rope::apply(k, rope_table);
    at::Tensor ctx_k, ctx_v;
    if (S > 0) {
      ctx_k = context->k[l].narrow(1, 0, S);
      ctx_v = context->v[l].narrow(1, 0, S);
    }
    std::vector<at::Tensor> outs;
    for (const Group& g : groups) outs.push_back(group_attention(g, q, k, v, ctx_k, ctx_v, shape));
    x = x + at::linear(groups.size() == 1 ? outs[0] : at::cat(outs), w.wo);
    x = feed_forward(w, x);
  }

  // Each block's own contiguous copy: a block kept across frames must not pin
  // this call's whole buffer. Keys first, then values, to bound the peak.
  std::vector<BlockKv> out(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) out[b].k = all_k.narrow(2, starts[b], lengths[b]).contiguous();
  all_k.reset();
  for (size_t b = 0; b < blocks.size(); ++b) out[b].v = all_v.narrow(2, starts[b], lengths[b]).contiguous();
  return out;
}

}  // namespace kvframe::runtime
