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

BlockRef BlockStore::find(const BlockKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second);
  return *it->second;
}

BlockRef BlockStore::insert(const BlockKey& key, runtime::BlockKv kv) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return *it->second;
  }
  const int64_t bytes = static_cast<int64_t>(kv.k.nbytes() + kv.v.nbytes());
  auto block = std::make_shared<const StoredBlock>(StoredBlock{key, std::move(kv), bytes});
  lru_.push_front(block);
  index_.emplace(key, lru_.begin());
  stats_.bytes += bytes;
  ++stats_.insertions;
  evict_over_budget();
  return block;
}

void BlockStore::evict_over_budget() {
  while (stats_.bytes > stats_.budget_bytes && !lru_.empty()) {
    const BlockRef& victim = lru_.back();
    stats_.bytes -= victim->bytes;
    index_.erase(victim->key);
    lru_.pop_back();
    ++stats_.evictions;
  }
}

StoreStats BlockStore::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  StoreStats s = stats_;
  s.entries = static_cast<int64_t>(index_.size());
  return s;
}

void BlockStore::set_budget(int64_t budget_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.budget_bytes = budget_bytes;
  evict_over_budget();
}

void BlockStore::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  index_.clear();
  lru_.clear();
  stats_.bytes = 0;
}

}  // namespace kvframe::kv_diff
