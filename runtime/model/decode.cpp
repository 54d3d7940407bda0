// Model::decode, the one batch entry point (batch.h): the batch checked
// whole before anything runs, its tokens grouped by sequence, then run as
// its attention says — appended to caches (model.cpp) or encoded as blocks
// (block_encoder.cpp).
#include <algorithm>
#include <string>
#include <vector>

#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

Error invalid(const std::string& what) { return {ErrorCode::kInvalidArgument, what}; }

}  // namespace

Result<Decoded> Model::decode(const Batch& batch) const {
  try {
    return impl_->decode(batch);
  } catch (const c10::Error& e) {
    return backend_error(e, "running a batch of " + std::to_string(batch.tokens.size()) +
                                " tokens (its caches are unchanged)");
  }
}

Result<Decoded> Model::Impl::decode(const Batch& batch) const {
  const bool append = batch.attention == Batch::Attention::kAppend;
  const auto T = static_cast<int64_t>(batch.tokens.size());
  if (T == 0) return invalid("decode() needs at least one token");
  if (!batch.sequence.empty() && static_cast<int64_t>(batch.sequence.size()) != T) {
    return invalid("decode(): the batch has " + std::to_string(T) + " tokens but " +
                   std::to_string(batch.sequence.size()) + " sequence ids");
  }
  if (!batch.logits.empty() && static_cast<int64_t>(batch.logits.size()) != T) {
    return invalid("decode(): the batch has " + std::to_string(T) + " tokens but " +
                   std::to_string(batch.logits.size()) + " logits flags");
  }
  // Sequences: one per cache when appending, else as many as the ids name.
  int64_t sequences = append ? static_cast<int64_t>(batch.caches.size()) : 0;
  for (int32_t s : batch.sequence) {
    if (s < 0 || (append && s >= sequences)) {
      return invalid("decode(): sequence id " + std::to_string(s) + " names no cache of the batch's " +
                     std::to_string(sequences));
    }
    if (!append) sequences = std::max<int64_t>(sequences, s + 1);
  }
  if (batch.sequence.empty()) sequences = std::max<int64_t>(sequences, 1);
  const char* unit = append ? "sequence " : "block ";

  Grouped g;
  g.n.assign(static_cast<size_t>(sequences), 0);
  auto sequence_of = [&](int64_t i) { return batch.sequence.empty() ? 0 : static_cast<size_t>(batch.sequence[i]); };
  for (int64_t i = 0; i < T; ++i) ++g.n[sequence_of(i)];
  g.first.assign(static_cast<size_t>(sequences), 0);
  for (size_t s = 1; s < g.n.size(); ++s) g.first[s] = g.first[s - 1] + g.n[s - 1];
  for (size_t s = 0; s < g.n.size(); ++s) {
    const std::string which = unit + std::to_string(s);
    if (append && (!batch.caches[s] || g.n[s] == 0)) return invalid(which + " needs a cache and at least one token");
    if (!append && g.n[s] == 0) return invalid(which + " has no tokens");
  }

  // Grouped order (stable), and the kept rows in batch order.
  g.ids.resize(static_cast<size_t>(T));
  std::vector<int64_t> next = g.first;
  const std::vector<uint8_t> keep = batch.logits.empty() ? batch.last_of_each_sequence() : batch.logits;
  for (int64_t i = 0; i < T; ++i) {
    const int64_t at = next[sequence_of(i)]++;
    const int64_t id = batch.tokens[static_cast<size_t>(i)];
    if (id < 0 || id >= config.n_vocab) {
      return invalid(unit + std::to_string(sequence_of(i)) + ": token ids must lie in [0, " +
                     std::to_string(config.n_vocab) + ")");
    }
    g.ids[static_cast<size_t>(at)] = id;
    if (keep[static_cast<size_t>(i)]) g.kept.push_back(at);
  }

  if (!append) {
    if (!batch.keep_kv && g.kept.empty()) return invalid("decode(): a block batch that keeps neither logits nor KV");
    if (batch.context) {
      if (auto checked = check_cache(*batch.context, "the context"); !checked.ok()) return checked.error();
      if (auto checked = check_window(*batch.context); !checked.ok()) return checked.error();
    }
    return decode_blocks(batch, g);
  }
  for (size_t s = 0; s < g.n.size(); ++s) {
    const std::string which = unit + std::to_string(s);
    const KvCache& cache = *batch.caches[s];
    for (size_t t = 0; t < s; ++t) {
      if (batch.caches[t] == &cache) return invalid(which + " shares its cache");
    }
    if (auto checked = check_cache(cache, which + "'s cache"); !checked.ok()) return checked.error();
    if (auto checked = check_window(cache); !checked.ok()) return checked.error();
    if (cache.length + g.n[s] > cache.capacity) {
      return Error{ErrorCode::kContextFull, which + "'s cache holds " + std::to_string(cache.capacity) +
                                                " tokens; " + std::to_string(cache.length) + " + " +
                                                std::to_string(g.n[s]) + " do not fit — allocate a larger cache"};
    }
  }
  Decoded out;
  out.logits = decode_append(batch, g);
  return out;
}

}  // namespace kvframe::runtime
