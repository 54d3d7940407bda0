// Batched attention over ragged rows (see grouped_attention.h).
#include "grouped_attention.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "cpu_attention.h"
#include "model_impl.h"  // check_ids, check_cache

namespace kvframe::runtime {
namespace {

// A group is padded to its longest row; it takes shorter rows while its slots
// stay within this many per real token (padded query slots cost a full pass
// over the context's keys, so waste is kept low).
constexpr double kMaxSlotsPerToken = 1.25;

}  // namespace

PackedRows pack_rows(const std::vector<std::vector<int32_t>>& rows, std::vector<int64_t> prefixes,
                     int64_t first_position) {
  PackedRows p;
  for (const auto& row : rows) p.lengths.push_back(static_cast<int64_t>(row.size()));
  p.prefixes = std::move(prefixes);
  // Longest rows first (stable, so equal lengths keep input order).
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!rows[r].empty()) p.order.push_back(r);
  }
  std::stable_sort(p.order.begin(), p.order.end(), [&](size_t a, size_t b) { return p.lengths[a] > p.lengths[b]; });
  p.starts.assign(rows.size(), 0);
  for (size_t r : p.order) {
    p.starts[r] = p.tokens();
    for (size_t t = 0; t < rows[r].size(); ++t) {
      p.ids.push_back(rows[r][t]);
      p.positions.push_back(first_position + p.prefixes[r] + static_cast<int64_t>(t));
    }
  }
  return p;
}

std::vector<Group> plan_groups(const PackedRows& p, int64_t S, const at::Tensor& context_padding, int64_t H,
                               at::Device device, int64_t window) {
  const auto longs = at::TensorOptions(at::kLong).device(device);
  const std::vector<int64_t>& lengths = p.lengths;
  const std::vector<size_t>& order = p.order;
  int64_t max_prefix = 0;
  for (size_t r : order) max_prefix = std::max(max_prefix, p.prefixes[r]);
  std::vector<Group> groups;
  for (size_t i = 0; i < order.size();) {
    const int64_t Lmax = lengths[order[i]];
    const int64_t max_rows = std::max<int64_t>(1, kScoreBudget / (H * Lmax * (S + max_prefix + Lmax)));
    size_t end = i + 1;
    int64_t tokens = Lmax;
    // Lengths only fall from here, so the first row that would pad too much ends the group.
    while (end < order.size() && static_cast<int64_t>(end - i) < max_rows) {
      const auto slots = static_cast<double>(static_cast<int64_t>(end - i + 1) * Lmax);
      if (slots > kMaxSlotsPerToken * static_cast<double>(tokens + lengths[order[end]])) break;
      tokens += lengths[order[end++]];
    }

    Group g;
    g.B = static_cast<int64_t>(end - i);
    g.Lmax = Lmax;
    std::vector<int64_t> members, gather, real, row_lengths, row_prefixes;
    int64_t group_prefix = 0;
    for (size_t m = i; m < end; ++m) {
      const size_t r = order[m];
      const int64_t n = lengths[r], slot0 = static_cast<int64_t>(m - i) * Lmax;
      members.push_back(static_cast<int64_t>(r));
      row_lengths.push_back(n);
      row_prefixes.push_back(p.prefixes[r]);
      group_prefix = std::max(group_prefix, p.prefixes[r]);
      g.keys = std::max(g.keys, p.prefixes[r] + n);
      for (int64_t t = 0; t < Lmax; ++t) gather.push_back(p.starts[r] + std::min(t, n - 1));
      for (int64_t t = 0; t < n; ++t) real.push_back(slot0 + t);
    }
    for (size_t m = i; m < end; ++m) g.row_starts.push_back(p.starts[order[m]]);
    g.row_lengths = row_lengths;
    g.row_prefixes = row_prefixes;
    g.members = at::tensor(members, at::kLong).to(device);
    g.gather = at::tensor(gather, at::kLong).to(device);
    g.real = at::tensor(real, at::kLong).to(device);
    if (S > 0) g.context_padding = context_padding;

    const int64_t rows = std::clamp<int64_t>(kScoreBudget / (g.B * H * (S + g.keys)), 1, Lmax);
    const at::Tensor n_b = at::tensor(row_lengths, at::kLong).to(device).view({g.B, 1, 1});
    const at::Tensor p_b = at::tensor(row_prefixes, at::kLong).to(device).view({g.B, 1, 1});
    for (int64_t r0 = 0; r0 < Lmax; r0 += rows) {
      const int64_t r = std::min(rows, Lmax - r0), keys = std::min(g.keys, group_prefix + r0 + r);
      at::Tensor query = at::arange(r0, r0 + r, longs).view({1, r, 1});
      at::Tensor key = at::arange(0, keys, longs).view({1, 1, keys});
      at::Tensor mask = (key > p_b + query) | (key >= p_b + n_b);  // [B, r, keys]
      Group::Chunk chunk{r0, r, keys, mask.unsqueeze(1), {}, {}};
      // The window binds once a query's own entry is `window` past a key's.
      if (window > 0 && S + group_prefix + r0 + r > window) {
        chunk.local_mask = (mask | (key <= p_b + query - window)).unsqueeze(1);
        if (S > 0) {
          at::Tensor context_key = at::arange(0, S, longs).view({1, 1, S});
          chunk.context_local_mask = (context_key <= p_b + query + S - window).unsqueeze(1);  // [B, 1, r, S]
        }
      }
      g.chunks.push_back(std::move(chunk));
    }
    groups.push_back(std::move(g));
    i = end;
  }
  return groups;
}

namespace {

at::Tensor explicit_group_attention(const Group& g, const at::Tensor& q, const at::Tensor& own_k,
                                    const at::Tensor& own_v, const at::Tensor& ctx_k, const at::Tensor& ctx_v,
                                    const AttentionShape& s, bool local) {
  const int64_t B = g.B, Lmax = g.Lmax, H = s.H, KH = s.KH, G = H / KH, d = s.d;
  const int64_t S = ctx_k.defined() ? ctx_k.size(1) : 0;
  // As in the forward pass, query head h reads KV head h / G: query slots are
  // laid out [KH, B, G, rows] so one matmul per KV head covers the context
  // (shared by all rows, never copied) and one per (KV head, row) the row's
  // own keys.
  at::Tensor qg = (q.index_select(0, g.gather) * (1.0 / std::sqrt(static_cast<double>(d))))
                      .view({B, Lmax, KH, G, d})
                      .permute({2, 0, 3, 1, 4});  // [KH, B, G, Lmax, d]

  std::vector<at::Tensor> parts;
  for (const Group::Chunk& c : g.chunks) {
    const int64_t M = B * G * c.rows, keys = c.keys;
    at::Tensor qc = qg.narrow(3, c.r0, c.rows).reshape({KH, M, d});
    at::Tensor kc = own_k.narrow(2, 0, keys).reshape({KH * B, keys, d});
    at::Tensor vc = own_v.narrow(2, 0, keys).reshape({KH * B, keys, d});
    at::Tensor scores = at::bmm(qc.reshape({KH * B, G * c.rows, d}), kc.transpose(1, 2)).view({KH, M, keys});
    if (S > 0) scores = at::cat({at::matmul(qc, ctx_k.transpose(1, 2)), scores}, 2);
    // Masks in place, each over the keys it concerns: the context's padding
    // (when it has any) and the row's own keys.
    const bool windowed = local && c.local_mask.defined();
    scores.view({KH, B, G, c.rows, S + keys}).narrow(4, S, keys).masked_fill_(windowed ? c.local_mask : c.mask, -INFINITY);
    if (g.context_padding.defined()) scores.narrow(2, 0, S).masked_fill_(g.context_padding, -INFINITY);
    if (windowed && c.context_local_mask.defined()) {
      scores.view({KH, B, G, c.rows, S + keys}).narrow(4, 0, S).masked_fill_(c.context_local_mask, -INFINITY);
    }
    at::Tensor probs = softmax_fp32(scores, s.dtype);
    at::Tensor out = at::bmm(probs.narrow(2, S, keys).reshape({KH * B, G * c.rows, keys}), vc).view({KH, M, d});
    if (S > 0) out = out + at::matmul(probs.narrow(2, 0, S), ctx_v);
    parts.push_back(out.view({KH, B, G, c.rows, d}));
  }
  at::Tensor out = parts.size() == 1 ? parts[0] : at::cat(parts, 3);  // [KH, B, G, Lmax, d]
  return out.permute({1, 3, 0, 2, 4}).reshape({B * Lmax, H * d}).index_select(0, g.real);
}

}  // namespace

at::Tensor group_attention(const Group& g, const at::Tensor& q, const at::Tensor& own_k, const at::Tensor& own_v,
                           const at::Tensor& ctx_k, const at::Tensor& ctx_v, const AttentionShape& s, bool local) {
  if (!cpu_attention_runs(q)) return explicit_group_attention(g, q, own_k, own_v, ctx_k, ctx_v, s, local);
  const int64_t first = g.row_starts.front();
  int64_t tokens = 0;
  std::vector<AttentionSequence> sequences;
  for (int64_t b = 0; b < g.B; ++b) {
    const auto row = static_cast<size_t>(b);
    const int64_t n = g.row_lengths[row], own = g.row_prefixes[row] + n;
    sequences.push_back({g.row_starts[row] - first, n, own_k.select(1, b).narrow(1, 0, own),
                         own_v.select(1, b).narrow(1, 0, own)});
    tokens += n;
  }
  at::Tensor out = at::empty({tokens, s.H * s.d}, q.options());
  cpu_attention(q.narrow(0, first, tokens), sequences, ctx_k, ctx_v, g.context_padding, local ? s.window : 0, out);
  return out;
}

at::Tensor gather_slots(const Group& g, const at::Tensor& t) {
  return t.index_select(0, g.gather).view({g.B, g.Lmax, t.size(1), t.size(2)}).permute({2, 0, 1, 3});
}

at::Tensor RowsPlan::attend(int64_t layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                            const at::Tensor& v) {
  if (!keep(layer, k_raw, k, v)) return {};
  at::Tensor ctx_k, ctx_v;
  if (context_ && context_->length > 0) {
    ctx_k = context_->k[static_cast<size_t>(layer)].narrow(1, 0, context_->length);
    ctx_v = context_->v[static_cast<size_t>(layer)].narrow(1, 0, context_->length);
  }
  std::vector<at::Tensor> outs;
  for (const Group& g : groups_) {
    const auto [own_k, own_v] = own_kv(layer, g, k, v);
    outs.push_back(group_attention(g, q, own_k, own_v, ctx_k, ctx_v, shape_, shape_.local(layer)));
  }
  return outs.size() == 1 ? outs[0] : at::cat(outs);
}

Status Model::Impl::check_ids(const std::vector<std::vector<int32_t>>& rows, const std::string& what) const {
  for (size_t r = 0; r < rows.size(); ++r) {
    for (int32_t id : rows[r]) {
      if (id < 0 || id >= config.n_vocab) {
        return Error{ErrorCode::kInvalidArgument, what + " " + std::to_string(r) + ": token id " +
                                                      std::to_string(id) + " outside the vocabulary [0, " +
                                                      std::to_string(config.n_vocab) + ")"};
      }
    }
  }
  return {};
}

Status Model::Impl::check_cache(const KvCache& cache, const std::string& what) const {
  bool fits = static_cast<int64_t>(cache.k.size()) == config.n_layer && cache.v.size() == cache.k.size() &&
              cache.length >= 0 && cache.length <= cache.capacity;
  const std::vector<int64_t> shape{config.n_head_kv, cache.capacity, config.head_dim};
  for (size_t l = 0; fits && l < cache.k.size(); ++l) {
    for (const at::Tensor& t : {cache.k[l], cache.v[l]}) {
      fits = fits && t.defined() && t.sizes() == shape && t.device().type() == device.type();
    }
  }
  if (!fits) return Error{ErrorCode::kInvalidArgument, what + " is not a KV cache of this model (use Model::new_cache)"};
  return check_padding(cache);
}

}  // namespace kvframe::runtime
