// block mode: the seeds' block attention over kv_diff.
//
//   1. The prefix (system turn, user header) is run causally once per session
//      into the start of the assembled buffer.
//   2. Each block's KV is looked up by content: already in this session's
//      buffer (reused), in the shared store (a cache hit), or encoded — all of
//      this query's misses in one batched Model::encode_blocks call, each
//      block after the prefix and blind to the others.
//   3. kv_diff places the blocks at contiguous positions in block order: new
//      ones written, moved ones re-rotated from their stored base.
//   4. (The session) the final block runs over the whole buffer and attends
//      to everything — or several final blocks, each on its own branch.
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "kv_context.h"
#include "stopwatch.h"

namespace kvframe::runtime {
namespace {

// Blocks per encode_blocks call are bounded by their total tokens, so a first
// frame of 32K tokens does not hold all its activations at once.
constexpr int64_t kEncodeTokensPerCall = 8192;
// What a session's assembled buffer starts with (it doubles as frames grow).
constexpr int64_t kInitialEntries = 1024;

using KeyMap = std::unordered_map<kv_diff::BlockKey, kv_diff::BlockRef, kv_diff::BlockKeyHash>;

class BlockContext final : public KvContext {
 public:
  BlockContext(Engine& engine, const SessionParams& params, kv_diff::AssembledKv kv)
      : engine_(engine), params_(params), kv_(std::move(kv)) {}

  Status prepare(const FramePrompt& prompt, QueryReport& report) override {
    Stopwatch watch(engine_.model().device());
    if (*prompt.prefix != prefix_) {
      if (Status loaded = load_prefix(*prompt.prefix); !loaded.ok()) return loaded.error();
      report.tokens_encoded += static_cast<int64_t>(prefix_.size());
    }

    // Which blocks must be encoded.
    KeyMap current;
    std::vector<kv_diff::BlockKey> keys;
    std::vector<kv_diff::PlacedBlock> placed;
    std::vector<size_t> missing;  // indices into placed
    placed.reserve(prompt.blocks->size());
    int64_t from_session = 0;  // blocks whose KV the buffer already held
    for (const auto& block : *prompt.blocks) {
      const kv_diff::BlockKey key = kv_diff::block_key(*block.tokens, context_id_);
      kv_diff::BlockRef ref;
      if (auto in_session = assembled_.find(key); in_session != assembled_.end()) {
        ref = in_session->second;
        ++report.blocks_reused;
        ++from_session;
      } else if (auto seen = current.find(key); seen != current.end()) {
        ref = seen->second;  // the same text twice in one frame
        ++report.blocks_reused;
      } else if (auto early = ahead_.find(key); early != ahead_.end()) {
        ref = early->second;  // encode_ahead() counted it (encoded or a hit) when it ran
        ++report.blocks_reused;
      } else if ((ref = engine_.store().find(key, params_.cache_scope))) {
        ++report.cache_hits;
      } else {
        missing.push_back(placed.size());
      }
      if (ref) current.emplace(key, ref);
      keys.push_back(key);
      placed.push_back({block.id, ref});
    }
    ahead_.clear();  // what was encoded ahead is in `current` now, or not in this frame
    if (Status encoded = encode(prompt, keys, missing, current, report); !encoded.ok()) return encoded;
    for (size_t i : missing) placed[i].kv = current.at(keys[i]);
    report.ms.encode = watch.lap();

    auto assembled = kv_.assemble(placed);
    if (!assembled) {
      refined_.clear();  // the buffer forgot its blocks: every refinement is stale
      return assembled.error();
    }
    assembled_ = std::move(current);
    report.assembly = *assembled;
    // Reused blocks that moved: re-rotated in place, or rewritten when the
    // layout moved them (compact layout, compaction); the other writes are
    // the blocks new to this session.
    const int64_t fresh = static_cast<int64_t>(placed.size()) - from_session;
    report.blocks_repositioned = assembled->blocks_rotated + std::max<int64_t>(0, assembled->blocks_written - fresh);
    report.ms.reposition = watch.lap();
    if (params_.fidelity.block_heads > 0 || params_.fidelity.blend_ratio > 0) {
      if (Status refined = refine(prompt, keys, report); !refined.ok()) return refined;
      report.ms.encode += watch.lap();
    }
    return kv_.reserve(std::min(kv_.cache().length + prompt.tail, kv_.max_capacity()));
  }

  // The frame's blocks that prepare() would encode, in block order, the
  // first of them up to max_tokens encoded now and kept in ahead_ (and the
  // store); blocks the store holds are taken from it, as prepare() would.
  Result<int64_t> encode_ahead(const FramePrompt& prompt, int64_t max_tokens, QueryReport& report) override {
    if (*prompt.prefix != prefix_) {
      if (Status loaded = load_prefix(*prompt.prefix); !loaded.ok()) return loaded.error();
      report.tokens_encoded += static_cast<int64_t>(prefix_.size());
    }
    std::vector<kv_diff::BlockKey> keys;
    std::vector<size_t> chosen;  // indices into keys: encoded by this call
    int64_t chosen_tokens = 0, left = 0;
    KeyMap seen;
    for (const auto& block : *prompt.blocks) {
      const kv_diff::BlockKey key = kv_diff::block_key(*block.tokens, context_id_);
      keys.push_back(key);
      if (assembled_.count(key) || ahead_.count(key) || !seen.emplace(key, nullptr).second) continue;
      if (kv_diff::BlockRef hit = engine_.store().find(key, params_.cache_scope)) {
        ahead_.emplace(key, std::move(hit));
        ++report.cache_hits;
        continue;
      }
      const auto n = static_cast<int64_t>(block.tokens->size());
      if (chosen.empty() || chosen_tokens + n <= max_tokens) {
        chosen.push_back(keys.size() - 1);
        chosen_tokens += n;
      } else {
        left += n;
      }
    }
    if (Status encoded = encode(prompt, keys, chosen, ahead_, report); !encoded.ok()) {
      for (auto it = ahead_.begin(); it != ahead_.end();) it = it->second ? std::next(it) : ahead_.erase(it);
      return encoded.error();
    }
    return left;
  }

  KvCache& cache() override { return kv_.cache(); }

  void finish(const std::vector<TokenId>&) override { kv_.truncate_to_assembly(); }

 private:
  // The fidelity knobs (BlockFidelity::block_heads, blend_ratio): block
  // tokens re-encoded in context, from the first block whose context changed
  // since that was last done (its tokens, where it lies, or where it sits in
  // memory: a block the layout rewrote from the store has lost its refined
  // KV) to the end. What a block gets depends only on what precedes it, so
  // a frame that keeps refined blocks answers as one that refines them all.
  Status refine(const FramePrompt& prompt, const std::vector<kv_diff::BlockKey>& keys, QueryReport& report) {
    const std::vector<kv_diff::SlotInfo> slots = kv_.slots();
    size_t first = 0;
    while (first < slots.size() && first < refined_.size() && refined_[first].key == keys[first] &&
           refined_[first].offset == slots[first].offset && refined_[first].position == slots[first].position) {
      ++first;
    }
    const common::BlockFidelity& fidelity = params_.fidelity;
    const bool blend = fidelity.blend_ratio > 0;
    std::vector<int32_t> tokens;
    std::vector<int64_t> entries, positions;
    RecomputeSelection selection;
    int64_t kept = 0;  // tokens that run every layer
    for (size_t b = first; b < slots.size(); ++b) {
      const std::vector<TokenId>& block = *(*prompt.blocks)[b].tokens;
      const int64_t length = slots[b].length, heads = std::min<int64_t>(fidelity.block_heads, length);
      const int64_t n = blend ? length : heads;  // blending runs every token's first layer
      for (int64_t t = 0; t < n; ++t) {
        tokens.push_back(block[static_cast<size_t>(t)]);
        entries.push_back(slots[b].offset + t);
        positions.push_back(slots[b].position + t);
        if (blend) selection.always.push_back(t < heads ? 1 : 0);
      }
      if (blend) {
        const auto share = static_cast<int64_t>(std::ceil(fidelity.blend_ratio * static_cast<double>(length)));
        selection.group_sizes.push_back(length);
        selection.keep.push_back(std::min(share, length - heads));
        kept += heads + selection.keep.back();
      } else {
        kept += heads;
      }
    }
    refined_.clear();
    // Values a blend selected last frame may still be in the buffer (a block
    // that moved keeps its values): blending starts from the blocks' own KV.
    if (blend) {
      if (Status restored = kv_.restore(first); !restored.ok()) return restored;
    }
    if (!tokens.empty()) {
      Status recomputed = engine_.model().recompute(kv_.cache(), tokens, entries, positions, kv_.entry_positions(),
                                                    blend ? &selection : nullptr);
      if (!recomputed.ok()) {
        return recomputed;  // refined_ stays empty: the next frame refines every block again
      }
      // Tokens that stopped after the selection's layer count for the share of layers they ran.
      const int64_t layers = engine_.model().config().n_layer;
      const int64_t stopped = static_cast<int64_t>(tokens.size()) - kept;
      report.tokens_encoded += kept + (stopped * (selection.at_layer + 1) + layers - 1) / layers;
    }
    for (size_t b = 0; b < slots.size(); ++b) refined_.push_back({keys[b], slots[b].offset, slots[b].position});
    return {};
  }

  // Runs the prefix into a fresh buffer; every block is keyed by it.
  Status load_prefix(const std::vector<TokenId>& prefix) {
    kv_.reset();
    assembled_.clear();
    ahead_.clear();
    refined_.clear();
    prefix_.clear();
    if (!prefix.empty()) {
      auto logits = runtime::prefill(engine_.model(), prefix, kv_.cache());
      if (!logits) return logits.error();
    }
    kv_.seal_prefix();
    prefix_ = prefix;
    // A block's KV depends on what it was encoded after: the prefix, or
    // nothing, and on the temperature its keys were scaled by. Keys carry
    // that, the mode, the model and the cache scope.
    const uint64_t model = engine_.fingerprint(params_.adapter.value_or(engine_.default_adapter()).get());
    uint64_t seeds[5] = {model, 0x626c6f636bull /* "block" */, 0, params_.cache_scope, 0};
    if (params_.blocks_after_prefix) seeds[2] = XXH3_64bits(prefix.data(), prefix.size() * sizeof(TokenId));
    const float temperature = params_.fidelity.block_temperature;
    if (temperature != 1) std::memcpy(&seeds[4], &temperature, sizeof(float));
    context_id_ = XXH3_64bits(seeds, sizeof(seeds));
    return {};
  }

  // Encodes the missing blocks into the store and `current`, in batches of
  // at most kEncodeTokensPerCall tokens; a text that repeats is encoded once.
  Status encode(const FramePrompt& prompt, const std::vector<kv_diff::BlockKey>& keys,
                const std::vector<size_t>& missing, KeyMap& current, QueryReport& report) {
    // The prefix as the encoder's context: its entries only.
    KvCache context = kv_.cache();
    context.length = context.next_position = kv_.prefix_length();
    context.padding = at::Tensor();
    const KvCache* after = params_.blocks_after_prefix && context.length > 0 ? &context : nullptr;

    std::vector<std::vector<int32_t>> batch;
    std::vector<kv_diff::BlockKey> batch_keys;
    int64_t batch_tokens = 0;
    auto flush = [&]() -> Status {
      if (batch.empty()) return {};
      auto encoded = engine_.model().encode_blocks(batch, after);
      if (!encoded) return encoded.error();
      for (size_t b = 0; b < batch.size(); ++b) {
        BlockKv& kv = (*encoded)[b];
        // BlockFidelity::block_temperature: logits against these keys divided by it.
        if (params_.fidelity.block_temperature != 1) kv.k = kv.k * (1.0 / params_.fidelity.block_temperature);
        current[batch_keys[b]] = engine_.store().insert(batch_keys[b], std::move(kv), params_.cache_scope);
      }
      report.blocks_encoded += static_cast<int64_t>(batch.size());
      report.tokens_encoded += batch_tokens;
      batch.clear();
      batch_keys.clear();
      batch_tokens = 0;
      return {};
    };
    for (size_t i : missing) {
      if (!current.emplace(keys[i], nullptr).second) {  // claimed by an earlier block of this frame
        ++report.blocks_reused;
        continue;
      }
      const auto& tokens = *(*prompt.blocks)[i].tokens;
      if (batch_tokens + static_cast<int64_t>(tokens.size()) > kEncodeTokensPerCall) {
        if (Status flushed = flush(); !flushed.ok()) return flushed;
      }
      batch.push_back(tokens);
      batch_keys.push_back(keys[i]);
      batch_tokens += static_cast<int64_t>(tokens.size());
    }
    return flush();
  }

  Engine& engine_;
  SessionParams params_;
  kv_diff::AssembledKv kv_;
  std::vector<TokenId> prefix_;
  uint64_t context_id_ = 0;
  // The blocks in kv_ after the last assemble(), by key.
  KeyMap assembled_;
  // Blocks of a frame not yet assembled, encoded (or found in the store) by
  // encode_ahead(): held here so the store's budget cannot drop them before
  // prepare() places them.
  KeyMap ahead_;
  // The blocks (in order) whose KV kv_ holds refined by the fidelity knobs,
  // as they were when that was done.
  struct Refined {
    kv_diff::BlockKey key;
    int64_t offset = 0, position = 0;
  };
  std::vector<Refined> refined_;
};

}  // namespace

kv_diff::Layout default_layout(const Model& model) {
  const bool windowed = model.config().sliding_window > 0;
  return model.device().is_cuda() || windowed ? kv_diff::Layout::kCompact : kv_diff::Layout::kSlack;
}

int64_t block_capacity(kv_diff::Layout layout, int64_t context) {
  return layout == kv_diff::Layout::kSlack ? context + context / 2 : context;
}

Result<std::unique_ptr<KvContext>> make_block_context(Engine& engine, const SessionParams& params) {
  // The slack layout leaves gaps and compacts at 1.5x fragmentation; give it
  // the room so the final block and the answer always fit after the blocks.
  // Allocated as frames need it: a session that asked for 8K tokens and
  // holds 2K keeps ~3K entries, not 12K.
  if (engine.model().config().sliding_window > 0 && params.layout == kv_diff::Layout::kSlack) {
    return Error{ErrorCode::kInvalidArgument, "the slack layout leaves gaps that " + engine.model().config().arch +
                                                  "'s sliding windows cannot count; use the compact layout"};
  }
  const kv_diff::Layout layout = params.layout.value_or(default_layout(engine.model()));
  auto kv = kv_diff::AssembledKv::create(engine.model().kv_shape(), engine.model().rope(),
                                         block_capacity(layout, params.context), layout,
                                         kInitialEntries);
  if (!kv) return kv.error();
  return std::unique_ptr<KvContext>(new BlockContext(engine, params, std::move(kv).value()));
}

}  // namespace kvframe::runtime
