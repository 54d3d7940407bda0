// Block attention's encoder (Model::encode_blocks): every block of a frame
// through the model in one pass, each block a row of grouped_attention.h's
// packed batch (with no earlier entries of its own), its attention through
// torch's flash kernels where they run (fused_attention.h).
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fused_attention.h"
#include "grouped_attention.h"
#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {

Result<std::vector<BlockKv>> Model::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                  const KvCache* context) const {
  try {
    return impl_->encode_blocks(blocks, context);
  } catch (const c10::Error& e) {
    return backend_error(e, "encoding " + std::to_string(blocks.size()) + " blocks");
  }
}

namespace {

// Each block a row with no earlier entries of its own; every layer's keys
// (before RoPE) and values kept, and the pass ends at the last layer's.
class EncoderPlan final : public RowsPlan {
 public:
  EncoderPlan(std::vector<Group> groups, const KvCache* context, const AttentionShape& shape, at::Tensor& all_k,
              at::Tensor& all_v)
      : RowsPlan(std::move(groups), context, shape), all_k_(all_k), all_v_(all_v) {}

 protected:
  bool keep(int64_t l, const at::Tensor& k_raw, const at::Tensor&, const at::Tensor& v) override {
    all_k_[l].copy_(k_raw.transpose(0, 1));
    all_v_[l].copy_(v.transpose(0, 1));
    return l + 1 < all_k_.size(0);  // nothing reads the last layer's output
  }

 private:
  at::Tensor& all_k_;
  at::Tensor& all_v_;
};

// The same pass through torch's flash kernels (fused_attention.h): every row
// one ragged sequence of the context's entries, then its own tokens.
class FusedEncoderPlan final : public AttentionPlan {
 public:
  FusedEncoderPlan(const PackedRows& p, const KvCache* context, at::Tensor& all_k, at::Tensor& all_v)
      : context_(context && context->length > 0 ? context : nullptr),
        all_k_(all_k),
        all_v_(all_v) {
    const int64_t S = context_ ? context_->length : 0;
    std::vector<int64_t> gather, q_starts{0}, k_starts{0};
    for (size_t r : p.order) {
      q_starts.push_back(q_starts.back() + p.lengths[r]);
      k_starts.push_back(k_starts.back() + S + p.lengths[r]);
      // Rows of cat(context, new tokens): the context's S, then the row's own.
      for (int64_t s = 0; s < S; ++s) gather.push_back(s);
      for (int64_t t = 0; t < p.lengths[r]; ++t) gather.push_back(S + p.starts[r] + t);
    }
    rows_ = ragged_rows(q_starts, k_starts, all_k.device());
    if (context_) gather_ = id_tensor(gather, all_k.device());
  }

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                    const at::Tensor& v) override {
    all_k_[l].copy_(k_raw.transpose(0, 1));
    all_v_[l].copy_(v.transpose(0, 1));
    if (l + 1 == all_k_.size(0)) return {};  // nothing reads the last layer's output
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
  at::Tensor& all_k_;
  at::Tensor& all_v_;
  RaggedRows rows_;
  at::Tensor gather_;
};

}  // namespace

Result<std::vector<BlockKv>> Model::Impl::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                        const KvCache* context) const {
  const int64_t n_layer = config.n_layer, H = config.n_head, KH = config.n_head_kv, d = config.head_dim;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].empty()) return Error{ErrorCode::kInvalidArgument, "block " + std::to_string(b) + " has no tokens"};
  }
  if (auto checked = check_ids(blocks, "block"); !checked.ok()) return checked.error();
  if (blocks.empty()) return std::vector<BlockKv>{};
  int64_t S = 0;
  if (context) {
    if (auto checked = check_cache(*context, "the context"); !checked.ok()) return checked.error();
    if (auto checked = check_window(*context); !checked.ok()) return checked.error();
    S = context->length;
  }
  c10::InferenceMode inference;  // no autograd bookkeeping

  const PackedRows packed = pack_rows(blocks, std::vector<int64_t>(blocks.size(), 0),
                                      context ? context->next_position : 0);
  const int64_t T = packed.tokens();
  at::Tensor context_padding;
  if (S > 0 && context->padding.defined()) context_padding = context->padding.narrow(0, 0, S);
  // Local layers' windows bind once a token is `window` positions past a key
  // it could see: then the explicit path, which masks them.
  int64_t longest = 0;
  for (const auto& block : blocks) longest = std::max<int64_t>(longest, static_cast<int64_t>(block.size()));
  const bool windowed = config.sliding_window > 0 && S + longest > config.sliding_window;
  // Keys before RoPE and values, per layer: [n_layer, KH, T, d].
  const auto options = at::TensorOptions(dtype).device(device);
  at::Tensor all_k = at::empty({n_layer, KH, T, d}, options), all_v = at::empty({n_layer, KH, T, d}, options);
  const Rope::Table rope_table = rope.table(id_tensor(packed.positions, device), dtype);
  const at::Tensor ids = id_tensor(packed.ids, device);
  if (!context_padding.defined() && !windowed && fused_kernels.rows) {
    FusedEncoderPlan plan(packed, context, all_k, all_v);
    run(ids, rope_table, plan, adapts(PromptPart::kContext));
  } else {
    EncoderPlan plan(plan_groups(packed, S, context_padding, H, device, config.sliding_window), context,
                     attention_shape(config, dtype), all_k, all_v);
    run(ids, rope_table, plan, adapts(PromptPart::kContext));
  }

  // Each block's own contiguous copy: a block kept across frames must not pin
  // this call's whole buffer. Keys first, then values, to bound the peak.
  std::vector<BlockKv> out(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) out[b].k = all_k.narrow(2, packed.starts[b], packed.lengths[b]).contiguous();
  all_k.reset();
  for (size_t b = 0; b < blocks.size(); ++b) out[b].v = all_v.narrow(2, packed.starts[b], packed.lengths[b]).contiguous();
  return out;
}

}  // namespace kvframe::runtime
