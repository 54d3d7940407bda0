// full and prefix modes: the whole prompt as one causal sequence in a plain
// KV cache. full prefills it from scratch every query; prefix keeps the
// longest token prefix the cache already holds (llama.cpp's prompt cache) and
// prefills the rest.
#include <algorithm>

#include "kv_context.h"
#include "stopwatch.h"

namespace kvframe::runtime {
namespace {

class CausalContext final : public KvContext {
 public:
  CausalContext(const Model& model, AttentionMode mode, KvCache cache)
      : model_(model), mode_(mode), cache_(std::move(cache)) {}

  Status prepare(const FramePrompt& prompt, QueryReport& report) override {
    std::vector<TokenId> tokens(*prompt.prefix);
    for (const auto& block : *prompt.blocks) tokens.insert(tokens.end(), block.tokens->begin(), block.tokens->end());

    int64_t keep = 0;
    if (mode_ == AttentionMode::kPrefix) {
      const auto limit = std::min(cached_.size(), tokens.size());
      keep = std::mismatch(cached_.begin(), cached_.begin() + static_cast<std::ptrdiff_t>(limit), tokens.begin()).first -
             cached_.begin();
    }
    // Blocks lying wholly inside the kept prefix count as reused.
    int64_t offset = static_cast<int64_t>(prompt.prefix->size());
    for (const auto& block : *prompt.blocks) {
      offset += static_cast<int64_t>(block.tokens->size());
      (offset <= keep ? report.blocks_reused : report.blocks_encoded) += 1;
    }
    cache_.length = cache_.next_position = keep;
    cached_.assign(tokens.begin(), tokens.begin() + keep);

    Stopwatch watch(model_.device());
    const std::vector<TokenId> rest(tokens.begin() + keep, tokens.end());
    if (!rest.empty()) {
      auto logits = runtime::prefill(model_, rest, cache_);
      if (!logits) {
        cache_.length = cache_.next_position = keep;  // what was written past `keep` is not trusted
        return logits.error();
      }
    }
    cached_.insert(cached_.end(), rest.begin(), rest.end());
    report.tokens_encoded += static_cast<int64_t>(rest.size());
    report.ms.encode = watch.lap();
    return {};
  }

  KvCache& cache() override { return cache_; }

  void finish(const std::vector<TokenId>& appended) override {
    // The cache holds every appended token that was run through the model
    // (a failed query may have run none of them).
    const auto run = std::min(static_cast<size_t>(cache_.length) - cached_.size(), appended.size());
    cached_.insert(cached_.end(), appended.begin(), appended.begin() + static_cast<std::ptrdiff_t>(run));
    cache_.length = cache_.next_position = static_cast<int64_t>(cached_.size());
  }

 private:
  const Model& model_;
  AttentionMode mode_;
  KvCache cache_;
  std::vector<TokenId> cached_;  // the tokens cache_ holds, entry for entry
};

}  // namespace

Result<std::unique_ptr<KvContext>> make_causal_context(const Model& model, AttentionMode mode, int64_t context) {
  auto cache = model.new_cache(context);
  if (!cache) return cache.error();
  return std::unique_ptr<KvContext>(new CausalContext(model, mode, std::move(cache).value()));
}

}  // namespace kvframe::runtime
