// Branch decoding (Model::new_branches, Model::forward_branches): many private
// continuations of one shared cache — the NPC queries on one frame — run as
// one batch.
//
// Each call packs every row's new tokens into one sequence (grouped_attention.h),
// so the embedding, norms and QKV / output / FFN matmuls run once for all rows;
// only attention keeps the rows apart. A row's queries read the shared
// cache's visible entries (one [KH, S, d] tensor for all rows: the shared
// cache is never copied) and, causally, its own branch's entries, which now
// include the row's new keys and values, with one fp32 softmax over both.
// A local (sliding-window) layer's query sees the keys within its window of
// entries, counting back over its branch's entries into the shared cache's,
// as forward() on a copy of the shared cache with the branch appended does.
#include <ATen/TensorIndexing.h>
#include <c10/core/InferenceMode.h>

#include <string>
#include <utility>
#include <vector>

#include "grouped_attention.h"
#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

// Each row's new keys and values are written to its branch (entries after
// its earlier ones), and its own keys are then the branch's entries.
class BranchPlan final : public RowsPlan {
 public:
  BranchPlan(std::vector<Group> groups, const KvCache* shared, const AttentionShape& shape, BranchCache& branches,
             at::Tensor row_of, at::Tensor entry_of)
      : RowsPlan(std::move(groups), shared, shape),
        branches_(branches), row_of_(std::move(row_of)), entry_of_(std::move(entry_of)) {}

 protected:
  bool keep(int64_t l, const at::Tensor&, const at::Tensor& k, const at::Tensor& v) override {
    using at::indexing::Slice;
    branches_.k[static_cast<size_t>(l)].index_put_({row_of_, Slice(), entry_of_}, k);
    branches_.v[static_cast<size_t>(l)].index_put_({row_of_, Slice(), entry_of_}, v);
    return true;
  }
  std::pair<at::Tensor, at::Tensor> own_kv(int64_t l, const Group& g, const at::Tensor&, const at::Tensor&) override {
    auto own = [&](const at::Tensor& t) { return t.narrow(2, 0, g.keys).index_select(0, g.members).permute({1, 0, 2, 3}); };
    return {own(branches_.k[static_cast<size_t>(l)]), own(branches_.v[static_cast<size_t>(l)])};
  }

 private:
  BranchCache& branches_;
  at::Tensor row_of_, entry_of_;
};

}  // namespace

Result<BranchCache> Model::new_branches(const KvCache& shared, int64_t branches, int64_t capacity) const {
  try {
    return impl_->new_branches(shared, branches, capacity);
  } catch (const c10::Error& e) {
    return backend_error(e, "allocating " + std::to_string(branches) + " branches of " + std::to_string(capacity) +
                                " tokens");
  }
}

Result<at::Tensor> Model::forward_branches(const std::vector<std::vector<int32_t>>& tokens, const KvCache& shared,
                                           BranchCache& branches) const {
  try {
    return impl_->forward_branches(tokens, shared, branches);
  } catch (const c10::Error& e) {
    return backend_error(e, "decoding " + std::to_string(tokens.size()) + " branches (their lengths are unchanged)");
  }
}

Result<BranchCache> Model::Impl::new_branches(const KvCache& shared, int64_t branches, int64_t capacity) const {
  if (branches < 1 || capacity < 1) {
    return Error{ErrorCode::kInvalidArgument, "new_branches() needs at least 1 branch of at least 1 token; got " +
                                                  std::to_string(branches) + " of " + std::to_string(capacity)};
  }
  BranchCache out;
  out.capacity = capacity;
  out.first_position = shared.next_position;
  out.length.assign(static_cast<size_t>(branches), 0);
  // Zeros rather than garbage: a row's attention reads the entries past its
  // branch's end with probability 0, and 0 * NaN would still be NaN.
  const auto options = at::TensorOptions(dtype).device(device);
  for (int64_t l = 0; l < config.n_layer; ++l) {
    out.k.push_back(at::zeros({branches, config.n_head_kv, capacity, config.head_dim}, options));
    out.v.push_back(at::zeros({branches, config.n_head_kv, capacity, config.head_dim}, options));
  }
  return out;
}

Result<at::Tensor> Model::Impl::forward_branches(const std::vector<std::vector<int32_t>>& tokens,
                                                 const KvCache& shared, BranchCache& branches) const {
  const int64_t B = branches.branches(), H = config.n_head, KH = config.n_head_kv, d = config.head_dim;
  if (static_cast<int64_t>(tokens.size()) != B) {
    return Error{ErrorCode::kInvalidArgument, "forward_branches() got " + std::to_string(tokens.size()) +
                                                  " token rows for " + std::to_string(B) + " branches"};
  }
  const std::vector<int64_t> cache_shape{B, KH, branches.capacity, d};
  bool fits = static_cast<int64_t>(branches.k.size()) == config.n_layer && branches.v.size() == branches.k.size();
  for (size_t l = 0; fits && l < branches.k.size(); ++l) {
    for (const at::Tensor& t : {branches.k[l], branches.v[l]}) {
      fits = fits && t.defined() && t.sizes() == cache_shape && t.device().type() == device.type();
    }
  }
  for (int64_t length : branches.length) fits = fits && length >= 0 && length <= branches.capacity;
  if (!fits) {
    return Error{ErrorCode::kInvalidArgument, "the branches are not a BranchCache of this model (use Model::new_branches)"};
  }
  if (auto checked = check_cache(shared, "the shared cache"); !checked.ok()) return checked.error();
  if (auto checked = check_window(shared); !checked.ok()) return checked.error();
  if (auto checked = check_ids(tokens, "row"); !checked.ok()) return checked.error();
  for (size_t b = 0; b < tokens.size(); ++b) {
    const auto n = static_cast<int64_t>(tokens[b].size());
    if (branches.length[b] + n > branches.capacity) {
      return Error{ErrorCode::kContextFull, "branch " + std::to_string(b) + " holds " +
                                                std::to_string(branches.capacity) + " tokens; " +
                                                std::to_string(branches.length[b]) + " + " + std::to_string(n) +
                                                " do not fit — make the branches with a larger capacity"};
    }
  }
  c10::InferenceMode inference;  // no autograd bookkeeping

  const PackedRows packed = pack_rows(tokens, branches.length, branches.first_position);
  const int64_t T = packed.tokens();
  at::Tensor logits = at::zeros({B, config.n_vocab}, at::TensorOptions(at::kFloat).device(device));
  if (T == 0) return logits;  // every row sat out

  const int64_t S = shared.length;
  at::Tensor shared_padding;
  if (S > 0 && shared.padding.defined()) shared_padding = shared.padding.narrow(0, 0, S);
  // Where each packed token goes (branch, entry), and each row's last token.
  std::vector<int64_t> rows, entries, active, last;
  for (size_t b : packed.order) {
    for (int64_t t = 0; t < packed.lengths[b]; ++t) {
      rows.push_back(static_cast<int64_t>(b));
      entries.push_back(packed.prefixes[b] + t);
    }
    active.push_back(static_cast<int64_t>(b));
    last.push_back(packed.starts[b] + packed.lengths[b] - 1);
  }
  const Rope::Table rope_table = rope.table(id_tensor(packed.positions, device), dtype);
  BranchPlan plan(plan_groups(packed, S, shared_padding, H, device, config.sliding_window), &shared,
                  attention_shape(config, dtype), branches, id_tensor(rows, device), id_tensor(entries, device));
  at::Tensor x = run(id_tensor(packed.ids, device), rope_table, plan, adapts(PromptPart::kQuery));
  logits.index_copy_(0, id_tensor(active, device), head(x.index_select(0, id_tensor(last, device))));
  for (size_t b : packed.order) branches.length[b] += packed.lengths[b];
  return logits;
}

}  // namespace kvframe::runtime
