// Content-addressed store of encoded blocks (keys before RoPE, values), shared
// by every session that runs the same model: a block that two sessions, or two
// frames of one session, send with the same tokens after the same prefix is
// encoded once.
//
// Budget: the store keeps at most budget_bytes of blocks, dropping the least
// recently used (found or inserted) first. Eviction drops only the store's
// reference: a session holds BlockRefs to the blocks of its current frame, so
// a block in use stays in memory until its last user lets go. The budget
// therefore bounds the bytes the store caches, not the bytes pinned by live
// sessions (those are bounded by the sessions' own buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "kvframe/runtime/model.h"

namespace kvframe::kv_diff {

// XXH3-128 of a block's tokens and its context.
struct BlockKey {
  uint64_t lo = 0, hi = 0;
  bool operator==(const BlockKey& o) const { return lo == o.lo && hi == o.hi; }
  bool operator!=(const BlockKey& o) const { return !(*this == o); }
};

struct BlockKeyHash {
  size_t operator()(const BlockKey& k) const { return static_cast<size_t>(k.lo); }  // already uniform
};

// context_id is everything besides the tokens that the encoding depends on;
// the caller folds in the model fingerprint, the attention mode and the prefix
// the block was encoded after. Token order matters.
BlockKey block_key(const std::vector<int32_t>& tokens, uint64_t context_id);

struct StoredBlock {
  BlockKey key;
  runtime::BlockKv kv;  // never modified once stored
  int64_t bytes = 0;    // of kv.k and kv.v
};
using BlockRef = std::shared_ptr<const StoredBlock>;

struct StoreStats {
  int64_t hits = 0, misses = 0;  // find() calls
  int64_t insertions = 0, evictions = 0;
  int64_t entries = 0, bytes = 0;  // held by the store now
  int64_t budget_bytes = 0;
};

// Thread-safe: every member takes the store's mutex.
class BlockStore {
 public:
  explicit BlockStore(int64_t budget_bytes);

  // The block with this key (and marks it most recently used), or nullptr.
  BlockRef find(const BlockKey& key);
  // Stores kv under key and returns it; if the key is already stored, returns
  // that entry instead (kv is dropped). Then evicts least recently used
  // entries until the store is within budget — a block larger than the whole
  // budget is returned to the caller but not kept.
  BlockRef insert(const BlockKey& key, runtime::BlockKv kv);

  StoreStats stats() const;
  void set_budget(int64_t budget_bytes);  // evicts down to the new budget at once
  void clear();                           // drops every entry; counters keep counting

 private:
  using Lru = std::list<BlockRef>;  // front: most recently used
  void evict_over_budget();         // caller holds mutex_

  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<BlockKey, Lru::iterator, BlockKeyHash> index_;
  StoreStats stats_;
};

}  // namespace kvframe::kv_diff
