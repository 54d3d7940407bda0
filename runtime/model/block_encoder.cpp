// Block attention's encoder (Model::decode of a kBlocks batch, which
// Model::encode_blocks makes): every block of a frame through the model in
// one pass, each block a row of grouped_attention.h's packed batch (with no
// earlier entries of its own), its attention through torch's flash kernels
// where they run (fused_attention.h).
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fused_attention.h"
#include "grouped_attention.h"
#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {

namespace {

// What the encoder's plans keep: every layer's keys (before RoPE) and
// values when asked for, and whether the pass goes on past layer l — past
// the last layer's keys only when logits are asked for.
struct EncoderKeeps {
  at::Tensor* all_k = nullptr;  // [n_layer, KH, T, d], or null: none kept
  at::Tensor* all_v = nullptr;
  int64_t n_layer = 0;
  bool logits = false;
  bool keep(int64_t l, const at::Tensor& k_raw, const at::Tensor& v) const {
    if (all_k) {
      (*all_k)[l].copy_(k_raw.transpose(0, 1));
      (*all_v)[l].copy_(v.transpose(0, 1));
    }
    return logits || l + 1 < n_layer;
  }
};

// Each block a row with no earlier entries of its own.
class EncoderPlan final : public RowsPlan {
 public:
  EncoderPlan(std::vector<Group> groups, const KvCache* context, const AttentionShape& shape, EncoderKeeps keeps)
      : RowsPlan(std::move(groups), context, shape), keeps_(keeps) {}

 protected:
  bool keep(int64_t l, const at::Tensor& k_raw, const at::Tensor&, const at::Tensor& v) override {
    return keeps_.keep(l, k_raw, v);
  }

 private:
  EncoderKeeps keeps_;
};

// The same pass through torch's flash kernels (fused_attention.h): every row
// one ragged sequence of the context's entries, then its own tokens.
class FusedEncoderPlan final : public AttentionPlan {
 public:
  FusedEncoderPlan(const PackedRows& p, const KvCache* context, EncoderKeeps keeps, at::Device device)
      : context_(context && context->length > 0 ? context : nullptr), keeps_(keeps) {
    const int64_t S = context_ ? context_->length : 0;
    std::vector<int64_t> gather, q_starts{0}, k_starts{0};
    for (size_t r : p.order) {
      q_starts.push_back(q_starts.back() + p.lengths[r]);
      k_starts.push_back(k_starts.back() + S + p.lengths[r]);
      // Rows of cat(context, new tokens): the context's S, then the row's own.
      for (int64_t s = 0; s < S; ++s) gather.push_back(s);
      for (int64_t t = 0; t < p.lengths[r]; ++t) gather.push_back(S + p.starts[r] + t);
    }
    rows_ = ragged_rows(q_starts, k_starts, device);
    if (context_) gather_ = id_tensor(gather, device);
  }

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                    const at::Tensor& v) override {
    if (!keeps_.keep(l, k_raw, v)) return {};  // nothing reads the last layer's output
    at::Tensor keys = k, values = v;
    if (context_) {
      const int64_t S = context_->length;
      keys = at::cat({context_->k[l].narrow(1, 0, S).transpose(0, 1), keys}).index_select(0, gather_);
      values = at::cat({context_->v[l].narrow(1, 0, S).transpose(0, 1), values}).index_select(0, gather_);
    }
    return fused_rows_attention(q, keys, values, rows_);
  }

 private:
  const KvCache* context_;
  EncoderKeeps keeps_;
  RaggedRows rows_;
  at::Tensor gather_;
};

}  // namespace

Decoded Model::Impl::decode_blocks(const Batch& batch, const Grouped& grouped) const {
  const int64_t n_layer = config.n_layer, H = config.n_head, KH = config.n_head_kv, d = config.head_dim;
  const KvCache* context = batch.context;
  const int64_t S = context ? context->length : 0;
  c10::InferenceMode inference;  // no autograd bookkeeping

  std::vector<std::vector<int32_t>> blocks(grouped.n.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const auto first = grouped.ids.begin() + grouped.first[b];
    blocks[b].assign(first, first + grouped.n[b]);
  }
  const PackedRows packed = pack_rows(blocks, std::vector<int64_t>(blocks.size(), 0),
                                      context ? context->next_position : 0);
  const int64_t T = packed.tokens();
  at::Tensor context_padding;
  if (S > 0 && context->padding.defined()) context_padding = context->padding.narrow(0, 0, S);
  // Local layers' windows bind once a token is `window` positions past a key
  // it could see: then the explicit path, which masks them.
  const int64_t longest = *std::max_element(grouped.n.begin(), grouped.n.end());
  const bool windowed = config.sliding_window > 0 && S + longest > config.sliding_window;
  // Keys before RoPE and values, per layer: [n_layer, KH, T, d].
  at::Tensor all_k, all_v;
  EncoderKeeps keeps{nullptr, nullptr, n_layer, !grouped.kept.empty()};
  if (batch.keep_kv) {
    const auto options = at::TensorOptions(dtype).device(device);
    all_k = at::empty({n_layer, KH, T, d}, options);
    all_v = at::empty({n_layer, KH, T, d}, options);
    keeps.all_k = &all_k;
    keeps.all_v = &all_v;
  }
  const Rope::Table rope_table = rope.table(id_tensor(packed.positions, device), dtype);
  const at::Tensor ids = id_tensor(packed.ids, device);
  const bool adapted = adapts(batch.part);
  at::Tensor x;
  if (!context_padding.defined() && !windowed && fused_kernels.rows) {
    FusedEncoderPlan plan(packed, context, keeps, device);
    x = run(ids, rope_table, plan, adapted);
  } else {
    EncoderPlan plan(plan_groups(packed, S, context_padding, H, device, config.sliding_window), context,
                     attention_shape(config, dtype), keeps);
    x = run(ids, rope_table, plan, adapted);
  }

  Decoded out;
  if (!grouped.kept.empty()) {
    // Token t of block b is packed at packed.starts[b] + t.
    std::vector<int64_t> rows;
    for (int64_t kept : grouped.kept) {
      const auto b = static_cast<size_t>(std::upper_bound(grouped.first.begin(), grouped.first.end(), kept) -
                                         grouped.first.begin() - 1);
      rows.push_back(packed.starts[b] + kept - grouped.first[b]);
    }
    out.logits = head(x.index_select(0, id_tensor(rows, device)));
  }
  if (!batch.keep_kv) return out;
  // Each block's own contiguous copy: a block kept across frames must not pin
  // this call's whole buffer. Keys first, then values, to bound the peak.
  out.blocks.resize(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) out.blocks[b].k = all_k.narrow(2, packed.starts[b], packed.lengths[b]).contiguous();
  all_k.reset();
  for (size_t b = 0; b < blocks.size(); ++b) out.blocks[b].v = all_v.narrow(2, packed.starts[b], packed.lengths[b]).contiguous();
  return out;
}

}  // namespace kvframe::runtime
