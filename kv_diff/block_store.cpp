#include "kvframe/kv_diff/block_store.h"

#include <xxhash.h>

namespace kvframe::kv_diff {

BlockKey block_key(const std::vector<int32_t>& tokens, uint64_t context_id) {
  // The context seeds the hash: the same tokens after another prefix (or in
  // another model) are another block.
  const XXH128_hash_t h = XXH3_128bits_withSeed(tokens.data(), tokens.size() * sizeof(int32_t), context_id);
  return {h.low64, h.high64};
}

BlockStore::BlockStore(int64_t budget_bytes) { stats_.budget_bytes = budget_bytes; }

void BlockStore::touch(const Entry& entry, ScopeState& scope) {
  lru_.splice(lru_.begin(), lru_, entry.in_store);
  scope.lru.splice(scope.lru.begin(), scope.lru, entry.in_scope);
}

BlockRef BlockStore::find(const BlockKey& key, Scope scope) {
  std::lock_guard<std::mutex> lock(mutex_);
  ScopeState& state = scopes_[scope];
  auto it = index_.find(key);
  // Keys of different scopes differ (the caller hashes the scope in); the
  // check makes a 128-bit collision across scopes a miss too.
  if (it == index_.end() || (*it->second.in_store)->scope != scope) {
    ++stats_.misses;
    ++state.stats.misses;
    return nullptr;
  }
  ++stats_.hits;
  ++state.stats.hits;
  touch(it->second, state);
  return *it->second.in_store;
}

BlockRef BlockStore::insert(const BlockKey& key, runtime::BlockKv kv, Scope scope) {
  std::lock_guard<std::mutex> lock(mutex_);
  ScopeState& state = scopes_[scope];
  if (auto it = index_.find(key); it != index_.end()) {
    const BlockRef& stored = *it->second.in_store;
    if (stored->scope == scope) {
      touch(it->second, state);
      return stored;
    }
    evict(BlockRef(stored));  // a collision across scopes: the newcomer takes the key
  }
  const int64_t bytes = static_cast<int64_t>(kv.k.nbytes() + kv.v.nbytes());
  auto block = std::make_shared<const StoredBlock>(StoredBlock{key, std::move(kv), bytes, scope});
  lru_.push_front(block);
  state.lru.push_front(block);
  index_.emplace(key, Entry{lru_.begin(), state.lru.begin()});
  stats_.bytes += bytes;
  state.stats.bytes += bytes;
  ++stats_.insertions;
  ++state.stats.insertions;
  evict_over_budget(&state);
  return block;
}

void BlockStore::evict(const BlockRef& victim) {
  auto it = index_.find(victim->key);
  ScopeState& scope = scopes_[victim->scope];
  stats_.bytes -= victim->bytes;
  scope.stats.bytes -= victim->bytes;
  ++stats_.evictions;
  ++scope.stats.evictions;
  const Entry entry = it->second;
  index_.erase(it);
  scope.lru.erase(entry.in_scope);
  lru_.erase(entry.in_store);  // last: it may hold the only reference to victim
}

void BlockStore::evict_over_budget(ScopeState* scope) {
  if (scope && scope_budget_bytes_ > 0) {
    while (scope->stats.bytes > scope_budget_bytes_ && !scope->lru.empty()) evict(BlockRef(scope->lru.back()));
  }
  while (stats_.bytes > stats_.budget_bytes && !lru_.empty()) evict(BlockRef(lru_.back()));
}

StoreStats BlockStore::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  StoreStats s = stats_;
  s.entries = static_cast<int64_t>(index_.size());
  return s;
}

ScopeStats BlockStore::scope_stats(Scope scope) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = scopes_.find(scope);
  if (it == scopes_.end()) return {};
  ScopeStats s = it->second.stats;
  s.entries = static_cast<int64_t>(it->second.lru.size());
  return s;
}

void BlockStore::set_budget(int64_t budget_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.budget_bytes = budget_bytes;
  evict_over_budget(nullptr);
}

void BlockStore::set_scope_budget(int64_t budget_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  scope_budget_bytes_ = budget_bytes;
  for (auto& [id, scope] : scopes_) evict_over_budget(&scope);
}

void BlockStore::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  index_.clear();
  lru_.clear();
  for (auto& [id, scope] : scopes_) {
    scope.lru.clear();
    scope.stats.bytes = 0;
  }
  stats_.bytes = 0;
}

}  // namespace kvframe::kv_diff
