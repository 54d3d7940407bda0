// Content-addressed store of encoded blocks (keys before RoPE, values), shared
// by every session that runs the same model: a block that two sessions, or two
// frames of one session, send with the same tokens after the same prefix is
// encoded once.
//
// Scopes: a shared cache answers faster for what others have sent, so it tells
// anyone who can time it what they sent. Sessions that must not learn of each
// other use different scopes (the server gives each tenant its own): the
// caller folds the scope into the key's context, and the store keeps apart
// what each scope holds, its hits and misses, and — with a scope budget — its
// bytes, so one scope's misses evict only its own blocks.
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

#include "kvframe/kv_core/kv_cache.h"

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

// 0: the scope of callers that share everything (a single-tenant engine).
using Scope = uint64_t;

struct StoredBlock {
  BlockKey key;
  runtime::BlockKv kv;  // never modified once stored
  int64_t bytes = 0;    // of kv.k and kv.v
  Scope scope = 0;
};
using BlockRef = std::shared_ptr<const StoredBlock>;

struct StoreStats {
  int64_t hits = 0, misses = 0;  // find() calls
  int64_t insertions = 0, evictions = 0;
  int64_t entries = 0, bytes = 0;  // held by the store now
  int64_t budget_bytes = 0;
};

// One scope's share of the store.
struct ScopeStats {
  int64_t hits = 0, misses = 0, insertions = 0, evictions = 0;
  int64_t entries = 0, bytes = 0;
};

// Thread-safe: every member takes the store's mutex.
class BlockStore {
 public:
  explicit BlockStore(int64_t budget_bytes);

  // The block with this key in this scope (and marks it most recently used),
  // or nullptr. Another scope's block is never returned.
  BlockRef find(const BlockKey& key, Scope scope = 0);
  // Stores kv under key in scope and returns it; if the key is already
  // stored there, returns that entry instead (kv is dropped). Then evicts
  // least recently used entries until the scope is within its budget and the
  // store within its own — a block larger than the budget is returned to the
  // caller but not kept.
  BlockRef insert(const BlockKey& key, runtime::BlockKv kv, Scope scope = 0);

  StoreStats stats() const;
  ScopeStats scope_stats(Scope scope) const;  // zeros for a scope never seen
  void set_budget(int64_t budget_bytes);  // evicts down to the new budget at once
  // The most bytes one scope keeps (0: no limit but the store's); evicts
  // down to it at once.
  void set_scope_budget(int64_t budget_bytes);
  void clear();  // drops every entry; counters keep counting

 private:
  using Lru = std::list<BlockRef>;  // front: most recently used
  struct Entry {
    Lru::iterator in_store, in_scope;
  };
  struct ScopeState {
    Lru lru;
    ScopeStats stats;
  };
  void touch(const Entry& entry, ScopeState& scope);  // caller holds mutex_
  void evict(const BlockRef& victim);                 // caller holds mutex_
  void evict_over_budget(ScopeState* scope);          // caller holds mutex_

  mutable std::mutex mutex_;
  Lru lru_;
  std::unordered_map<BlockKey, Entry, BlockKeyHash> index_;
  std::unordered_map<Scope, ScopeState> scopes_;
  StoreStats stats_;
  int64_t scope_budget_bytes_ = 0;
};

}  // namespace kvframe::kv_diff
