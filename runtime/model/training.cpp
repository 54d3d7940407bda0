// Training passes (Model::context_kv, Model::forward_over): the forward pass
// of forward_pass.cpp with plans that keep every tensor in the autograd graph
// (nothing written in place into a cache), attending exactly as inference
// does — so what block fine-tuning trains is what block mode runs.
//
// A sample's answer is scored in two passes: the context (prefix + blocks)
// under the causal or the block mask into a KV cache of its own, then the
// query (final block + answer) over it. The split is exact — the context
// never attends to the query — and lets an adapter of scope kQuery skip the
// context's gradients, or a trainer reuse block KV the inference engine made.
//
// Local (sliding-window) layers window every part as inference does, by
// entries: the causal context as forward() over the whole prompt; under the
// block mask the prefix as its prefill, each block as encode_blocks does (the
// prefix's entries, then its own), and the query over the context as
// forward() — whose entries are positions: no padding, as in the compact
// layout that windowed models run.
#include <ATen/core/grad_mode.h>

#include <string>
#include <vector>

#include "grouped_attention.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

// The context in one causal row: each layer's rotated keys and values are
// kept as the context cache.
class CausalContextPlan final : public RowsPlan {
 public:
  CausalContextPlan(std::vector<Group> groups, const AttentionShape& shape, KvCache& out, int64_t n_layer)
      : RowsPlan(std::move(groups), nullptr, shape), out_(out), n_layer_(n_layer) {}

 protected:
  bool keep(int64_t l, const at::Tensor&, const at::Tensor& k, const at::Tensor& v) override {
    out_.k.push_back(k.transpose(0, 1));
    out_.v.push_back(v.transpose(0, 1));
    return l + 1 < n_layer_;
  }

 private:
  KvCache& out_;
  int64_t n_layer_;
};

// The block mask: packed tokens are the prefix [0, P) then the blocks as
// pack_rows lays them out [P, P + N). The prefix attends causally to itself;
// each block causally to itself, after the prefix's keys when
// blocks_after_prefix, at the positions block mode encodes it at. The
// context cache holds the prefix's keys, then every block's keys re-rotated
// to its place in document order (what kv_diff's assembly does).
class BlockContextPlan final : public AttentionPlan {
 public:
  BlockContextPlan(std::vector<Group> prefix_groups, std::vector<Group> block_groups, int64_t P, bool after_prefix,
                   Rope::Table final_table, at::Tensor document_order, const AttentionShape& shape, KvCache& out,
                   int64_t n_layer)
      : prefix_groups_(std::move(prefix_groups)), block_groups_(std::move(block_groups)), P_(P),
        after_prefix_(after_prefix), final_table_(std::move(final_table)),
        document_order_(std::move(document_order)), shape_(shape), out_(out), n_layer_(n_layer) {}

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& rotated, const at::Tensor& k,
                    const at::Tensor& v) override {
    at::Tensor prefix_k, prefix_v;  // [P, KH, d]
    if (P_ > 0) {
      prefix_k = rotated.narrow(0, 0, P_);
      prefix_v = v.narrow(0, 0, P_);
    }
    // What the final block reads: placed as kv_diff places them, a local
    // layer's keys at its own RoPE base.
    at::Tensor blocks_k = Rope::apply(k.index_select(0, document_order_), final_table_.of(shape_.local(l)));
    at::Tensor blocks_v = v.index_select(0, document_order_);
    out_.k.push_back((P_ > 0 ? at::cat({prefix_k, blocks_k}) : blocks_k).transpose(0, 1));
    out_.v.push_back((P_ > 0 ? at::cat({prefix_v, blocks_v}) : blocks_v).transpose(0, 1));
    if (l + 1 == n_layer_) return {};

    std::vector<at::Tensor> outs;
    for (const Group& g : prefix_groups_) {
      outs.push_back(group_attention(g, q, gather_slots(g, rotated), gather_slots(g, v), {}, {}, shape_,
                                     shape_.local(l)));
    }
    at::Tensor ctx_k, ctx_v;
    if (after_prefix_ && P_ > 0) {
      ctx_k = prefix_k.transpose(0, 1);
      ctx_v = prefix_v.transpose(0, 1);
    }
    for (const Group& g : block_groups_) {
      outs.push_back(group_attention(g, q, gather_slots(g, rotated), gather_slots(g, v), ctx_k, ctx_v, shape_,
                                     shape_.local(l)));
    }
    return at::cat(outs);
  }

 private:
  std::vector<Group> prefix_groups_, block_groups_;
  int64_t P_;
  bool after_prefix_;
  Rope::Table final_table_;
  at::Tensor document_order_;  // [N]: packed index of each block token, in document order
  AttentionShape shape_;
  KvCache& out_;
  int64_t n_layer_;
};

KvCache empty_context(int64_t tokens) {
  KvCache cache;
  cache.length = cache.capacity = cache.next_position = tokens;
  return cache;
}

}  // namespace

int64_t PromptSample::context_tokens() const {
  int64_t n = static_cast<int64_t>(prefix.size());
  for (const auto& block : blocks) n += static_cast<int64_t>(block.size());
  return n;
}

Result<KvCache> Model::context_kv(const PromptSample& sample, AttentionMask mask, bool blocks_after_prefix) const {
  try {
    return impl_->context_kv(sample, mask, blocks_after_prefix);
  } catch (const c10::Error& e) {
    return backend_error(e, "running a training sample's context");
  }
}

Result<at::Tensor> Model::forward_over(const std::vector<int32_t>& tokens, const KvCache& context, PromptPart part,
                                       int64_t logit_rows) const {
  try {
    return impl_->forward_over(tokens, context, part, logit_rows);
  } catch (const c10::Error& e) {
    return backend_error(e, "running a training sample's query");
  }
}

Result<KvCache> Model::Impl::context_kv(const PromptSample& sample, AttentionMask mask, bool after_prefix) const {
  const int64_t P = static_cast<int64_t>(sample.prefix.size()), S = sample.context_tokens();
  if (S == 0) return Error{ErrorCode::kInvalidArgument, "the sample has no context: no prefix and no blocks"};
  for (size_t b = 0; b < sample.blocks.size(); ++b) {
    if (sample.blocks[b].empty()) return Error{ErrorCode::kInvalidArgument, "block " + std::to_string(b) + " has no tokens"};
  }
  if (auto checked = check_ids({sample.prefix}, "prefix"); !checked.ok()) return checked.error();
  if (auto checked = check_ids(sample.blocks, "block"); !checked.ok()) return checked.error();
  // The context runs without autograd unless the adapter changes it.
  at::AutoGradMode grad(at::GradMode::is_enabled() && adapts(PromptPart::kContext));
  const AttentionShape shape = attention_shape(config, dtype);
  const int64_t window = config.sliding_window;
  KvCache out = empty_context(S);

  if (mask == AttentionMask::kCausal) {
    std::vector<int32_t> all = sample.prefix;
    for (const auto& block : sample.blocks) all.insert(all.end(), block.begin(), block.end());
    const PackedRows packed = pack_rows({all}, {0}, 0);
    const Rope::Table table = rope.table(id_tensor(packed.positions, device));
    CausalContextPlan plan(plan_groups(packed, 0, {}, config.n_head, device, window), shape, out, config.n_layer);
    run(id_tensor(packed.ids, device), table, plan, adapts(PromptPart::kContext));
    return out;
  }

  PackedRows prefix = pack_rows({sample.prefix}, {0}, 0);
  PackedRows blocks = pack_rows(sample.blocks, std::vector<int64_t>(sample.blocks.size(), 0), after_prefix ? P : 0);
  for (int64_t& start : blocks.starts) start += P;  // blocks follow the prefix in the packed batch
  std::vector<int64_t> ids = prefix.ids, positions = prefix.positions;
  ids.insert(ids.end(), blocks.ids.begin(), blocks.ids.end());
  positions.insert(positions.end(), blocks.positions.begin(), blocks.positions.end());
  std::vector<int64_t> document_order, final_positions;
  for (size_t b = 0; b < sample.blocks.size(); ++b) {
    for (int64_t t = 0; t < blocks.lengths[b]; ++t) {
      document_order.push_back(blocks.starts[b] + t);
      final_positions.push_back(P + static_cast<int64_t>(final_positions.size()));
    }
  }
  const Rope::Table table = rope.table(id_tensor(positions, device));
  BlockContextPlan plan(P > 0 ? plan_groups(prefix, 0, {}, config.n_head, device, window) : std::vector<Group>{},
                        plan_groups(blocks, after_prefix ? P : 0, {}, config.n_head, device, window), P, after_prefix,
                        rope.table(id_tensor(final_positions, device)), id_tensor(document_order, device), shape, out,
                        config.n_layer);
  run(id_tensor(ids, device), table, plan, adapts(PromptPart::kContext));
  return out;
}

Result<at::Tensor> Model::Impl::forward_over(const std::vector<int32_t>& tokens, const KvCache& context,
                                             PromptPart part, int64_t logit_rows) const {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n == 0) return Error{ErrorCode::kInvalidArgument, "forward_over() needs at least one token"};
  if (logit_rows < 1 || logit_rows > n) {
    return Error{ErrorCode::kInvalidArgument, "forward_over(): logit_rows must lie in [1, " + std::to_string(n) + "]"};
  }
  if (auto checked = check_ids({tokens}, "row"); !checked.ok()) return checked.error();
  if (auto checked = check_cache(context, "the context"); !checked.ok()) return checked.error();
  if (auto checked = check_window(context); !checked.ok()) return checked.error();
  const PackedRows packed = pack_rows({tokens}, {0}, context.next_position);
  at::Tensor padding;
  if (context.length > 0 && context.padding.defined()) padding = context.padding.narrow(0, 0, context.length);
  const Rope::Table table = rope.table(id_tensor(packed.positions, device));
  RowsPlan plan(plan_groups(packed, context.length, padding, config.n_head, device, config.sliding_window), &context,
                attention_shape(config, dtype));
  at::Tensor x = run(id_tensor(packed.ids, device), table, plan, adapts(part));
  return head(x.narrow(0, n - logit_rows, logit_rows));
}

}  // namespace kvframe::runtime
