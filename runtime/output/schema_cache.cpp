// SchemaCache: compiled schemas by scope and text. A game sends the same few
// schemas again and again (one per kind of decision), and a compiled schema
// carries the masks its decodings have computed, so a hit saves those too.
#include <xxhash.h>

#include <algorithm>
#include <list>
#include <unordered_map>

#include "kvframe/runtime_output/json_schema.h"

namespace kvframe::runtime {

struct SchemaCache::Impl {
  struct Entry {
    uint64_t hash;
    uint64_t scope;
    std::string text;  // compared on a hit: a hash collision must not hand out another schema
    std::shared_ptr<CompiledSchema> schema;
  };
  std::shared_ptr<const TokenVocabulary> vocab;
  size_t capacity;
  int64_t max_bytes;
  std::list<Entry> lru;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> by_hash;
  Stats stats;

  // Drops least recently used schemas (never the one just handed out, at
  // the front) while there are too many or their masks hold too much memory.
  // Masks grow after a schema is cached, so the bytes are summed anew: a few
  // hundred entries at most.
  void evict() {
    int64_t bytes = 0;
    for (const Entry& entry : lru) bytes += entry.schema->stats().mask_bytes;
    while (lru.size() > 1 && (lru.size() > capacity || bytes > max_bytes)) {
      bytes -= lru.back().schema->stats().mask_bytes;
      by_hash.erase(lru.back().hash);
      lru.pop_back();
      ++stats.evicted;
    }
    stats.entries = static_cast<int64_t>(lru.size());
    stats.mask_bytes = bytes;
  }
};

SchemaCache::SchemaCache(std::shared_ptr<const TokenVocabulary> vocab, size_t capacity, int64_t max_bytes)
    : impl_(std::make_unique<Impl>()) {
  impl_->vocab = std::move(vocab);
  impl_->capacity = std::max<size_t>(capacity, 1);
  impl_->max_bytes = max_bytes;
}



SchemaCache::~SchemaCache() = default;

SchemaResult<std::shared_ptr<CompiledSchema>> SchemaCache::get(std::string_view schema_json, uint64_t scope) {
  Impl& c = *impl_;
  const uint64_t hash = XXH3_64bits_withSeed(schema_json.data(), schema_json.size(), scope);
  if (auto it = c.by_hash.find(hash);
      it != c.by_hash.end() && it->second->scope == scope && it->second->text == schema_json) {
    c.lru.splice(c.lru.begin(), c.lru, it->second);
    ++c.stats.hits;
    c.evict();
    return c.lru.front().schema;
  }
  ++c.stats.misses;
  auto compiled = compile_schema(schema_json, c.vocab);
  if (!compiled) return compiled.error();
  if (auto it = c.by_hash.find(hash); it != c.by_hash.end()) {  // a collision: the newer text wins
    c.lru.erase(it->second);
    c.by_hash.erase(it);
  }
  c.lru.push_front({hash, scope, std::string(schema_json), *compiled});
  c.by_hash[hash] = c.lru.begin();
  c.evict();
  return *compiled;
}

SchemaCache::Stats SchemaCache::stats() const { return impl_->stats; }

const std::shared_ptr<const TokenVocabulary>& SchemaCache::vocabulary() const { return impl_->vocab; }

}  // namespace kvframe::runtime
