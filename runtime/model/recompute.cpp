// Model::recompute: chosen entries of a cache run through the model again,
// each token attending to every entry at or before its position. The block
// engine's fidelity knobs use it to re-encode, in context, tokens of blocks
// that were encoded alone (block_context.cpp): every layer for a few tokens
// (a block's first tokens), or the first layers for all and the rest for
// those whose values the context moved most (blending, a RecomputeSelection).
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_set>

#include "grouped_attention.h"  // kScoreBudget, softmax_fp32
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

// Each layer: the tokens' keys (rotated at their positions) and values are
// written at their entries, then each token attends to the entries `visible`
// lets it see ([T, L], true = visible; in windowed layers `visible_local`),
// in chunks of rows.
// With a selection, at its layer the tokens that go on are picked (before
// that layer's values overwrite the cached ones they are measured against)
// and only their rows are attended and returned from then on.
class RecomputePlan final : public AttentionPlan {
 public:
  RecomputePlan(const ModelConfig& config, at::ScalarType dtype, KvCache& cache, at::Tensor entries,
                at::Tensor visible, at::Tensor visible_local, const RecomputeSelection* selection)
      : config_(config),
        dtype_(dtype),
        cache_(cache),
        entries_(std::move(entries)),
        visible_(std::move(visible)),
        visible_local_(std::move(visible_local)),
        selection_(selection) {}

  at::Tensor attend(int64_t l, const at::Tensor& q_all, const at::Tensor& k, const at::Tensor&,
                    const at::Tensor& v) override {
    const bool narrowing = selection_ && l == selection_->at_layer && l + 1 < config_.n_layer;
    if (narrowing) kept_ = most_moved(cache_.v[l].index_select(1, entries_), v.transpose(0, 1));
    cache_.k[l].index_copy_(1, entries_, k.transpose(0, 1));
    cache_.v[l].index_copy_(1, entries_, v.transpose(0, 1));
    if (l + 1 == config_.n_layer) return {};  // nothing reads the last layer's output
    at::Tensor q = q_all;
    if (narrowing) {
      if (kept_.numel() == 0) return {};  // no token goes on: the rest stay cached
      q = q.index_select(0, kept_);
      entries_ = entries_.index_select(0, kept_);
      visible_ = visible_.index_select(0, kept_);
      if (visible_local_.defined()) visible_local_ = visible_local_.index_select(0, kept_);
    }
    const at::Tensor& visible = config_.is_local(l) && visible_local_.defined() ? visible_local_ : visible_;
    const int64_t T = q.size(0), H = config_.n_head, KH = config_.n_head_kv, G = H / KH, d = config_.head_dim;
    const int64_t L = visible.size(1);
    const at::Tensor keys = cache_.k[l].narrow(1, 0, L), values = cache_.v[l].narrow(1, 0, L);
    const int64_t rows = std::clamp<int64_t>(kScoreBudget / (H * L), 1, T);
    std::vector<at::Tensor> parts;
    for (int64_t r0 = 0; r0 < T; r0 += rows) {
      const int64_t r = std::min(rows, T - r0);
      // Query head h reads KV head h / G: the G heads of each KV head share one matmul.
      const at::Tensor qg = (q.narrow(0, r0, r) * (1.0 / std::sqrt(static_cast<double>(d))))
                                .reshape({r, KH, G, d})
                                .permute({1, 2, 0, 3})
                                .reshape({KH, G * r, d});
      at::Tensor scores = at::matmul(qg, keys.transpose(1, 2));  // [KH, G r, L]
      scores.view({KH, G, r, L}).masked_fill_(visible.narrow(0, r0, r).logical_not(), -INFINITY);
      const at::Tensor out = at::matmul(softmax_fp32(scores, dtype_), values);  // [KH, G r, d]
      parts.push_back(out.view({KH, G, r, d}).permute({2, 0, 1, 3}).reshape({r, H * d}));
    }
    return parts.size() == 1 ? parts[0] : at::cat(parts);
  }

  at::Tensor rows_after(int64_t l) override {
    return selection_ && l == selection_->at_layer ? kept_ : at::Tensor();
  }

 private:
  // The rows that go on: each group's `always` tokens and the keep[g]
  // others whose values moved most (squared distance over heads), in order.
  at::Tensor most_moved(const at::Tensor& cached, const at::Tensor& fresh) const {
    const at::Tensor moved_t = (fresh.to(at::kFloat) - cached.to(at::kFloat)).pow(2).sum(at::IntArrayRef{0, 2}).cpu();
    const float* moved = moved_t.data_ptr<float>();
    const RecomputeSelection& s = *selection_;
    std::vector<int64_t> kept, others;
    int64_t start = 0;
    for (size_t g = 0; g < s.group_sizes.size(); ++g) {
      others.clear();
      for (int64_t t = start; t < start + s.group_sizes[g]; ++t) {
        if (!s.always.empty() && s.always[static_cast<size_t>(t)]) {
          kept.push_back(t);
        } else {
          others.push_back(t);
        }
      }
      const auto n = static_cast<std::ptrdiff_t>(std::min<size_t>(static_cast<size_t>(s.keep[g]), others.size()));
      // Ties go to the earlier token, so a frame selects as its recomputation does.
      std::partial_sort(others.begin(), others.begin() + n, others.end(),
                        [&](int64_t a, int64_t b) { return moved[a] > moved[b] || (moved[a] == moved[b] && a < b); });
      kept.insert(kept.end(), others.begin(), others.begin() + n);
      start += s.group_sizes[g];
    }
    std::sort(kept.begin(), kept.end());
    return id_tensor(kept, entries_.device());
  }

  const ModelConfig& config_;
  at::ScalarType dtype_;
  KvCache& cache_;
  at::Tensor entries_, visible_, visible_local_;
  const RecomputeSelection* selection_;
  at::Tensor kept_;
};

// Why a selection cannot narrow `tokens` tokens, if it cannot.
std::optional<std::string> misfit(const RecomputeSelection& s, size_t tokens) {
  if (s.at_layer < 0) return "its layer is negative";
  if (s.keep.size() != s.group_sizes.size()) return "keep and group_sizes differ in size";
  if (!s.always.empty() && s.always.size() != tokens) return "always is not one flag per token";
  int64_t sum = 0;
  for (size_t g = 0; g < s.group_sizes.size(); ++g) {
    if (s.group_sizes[g] < 0 || s.keep[g] < 0) return "a group's size or keep is negative";
    sum += s.group_sizes[g];
  }
  if (sum != static_cast<int64_t>(tokens)) return "its groups do not cover the tokens";
  return std::nullopt;
}

}  // namespace

Status Model::recompute(KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int64_t>& entries,
                        const std::vector<int64_t>& positions, const at::Tensor& entry_positions,
                        const RecomputeSelection* selection) const {
  try {
    return impl_->recompute(cache, tokens, entries, positions, entry_positions, selection);
  } catch (const c10::Error& e) {
    return backend_error(e, "recomputing " + std::to_string(tokens.size()) + " entries");
  }
}

Status Model::Impl::recompute(KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int64_t>& entries,
                              const std::vector<int64_t>& positions, const at::Tensor& entry_positions,
                              const RecomputeSelection* selection) const {
  const auto T = static_cast<int64_t>(tokens.size());
  if (T == 0 || entries.size() != tokens.size() || positions.size() != tokens.size()) {
    return Error{ErrorCode::kInvalidArgument, "recompute() needs tokens, entries and positions of one size (> 0)"};
  }
  if (auto checked = check_cache(cache, "the cache"); !checked.ok()) return checked.error();
  if (auto checked = check_ids({tokens}, "row"); !checked.ok()) return checked.error();
  std::unordered_set<int64_t> seen;
  for (int64_t e : entries) {
    if (e < 0 || e >= cache.length || !seen.insert(e).second) {
      return Error{ErrorCode::kInvalidArgument, "recompute(): entry " + std::to_string(e) +
                                                    " is repeated or outside the cache's [0, " +
                                                    std::to_string(cache.length) + ")"};
    }
  }
  if (!entry_positions.defined() || entry_positions.scalar_type() != at::kLong || entry_positions.dim() != 1 ||
      entry_positions.size(0) != cache.length) {
    return Error{ErrorCode::kInvalidArgument,
                 "recompute(): entry_positions must be int64 [cache.length = " + std::to_string(cache.length) + "]"};
  }
  if (selection) {
    if (auto why = misfit(*selection, tokens.size())) {
      return Error{ErrorCode::kInvalidArgument, "recompute(): the selection does not fit: " + *why};
    }
  }
  c10::InferenceMode inference;  // no autograd bookkeeping
  const at::Tensor at_positions = id_tensor(positions, device);
  const at::Tensor key_positions = entry_positions.to(device).view({1, cache.length});
  const at::Tensor visible = key_positions <= at_positions.view({T, 1});
  at::Tensor visible_local;  // local layers: the window's positions only
  if (config.sliding_window > 0) visible_local = visible & (key_positions > at_positions.view({T, 1}) - config.sliding_window);
  RecomputePlan plan(config, dtype, cache, id_tensor(entries, device), visible, visible_local, selection);
  std::vector<int64_t> ids(tokens.begin(), tokens.end());
  run(id_tensor(ids, device), rope.table(at_positions, dtype), plan, adapts(PromptPart::kContext));
  return {};
}

}  // namespace kvframe::runtime
