#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "kv_test_util.h"
#include "kvframe/kv_diff/block_store.h"

namespace kvframe::kv_diff {
namespace {

using testing::random_block;

// Bytes of one random_block(n) (fp32 K and V).
int64_t block_bytes(int64_t n) { return random_block(n).k.nbytes() * 2; }

BlockKey key(int32_t i) { return block_key({i, i + 1, i + 2}, 0); }

TEST(BlockKey, DependsOnTokensTheirOrderAndContext) {
  const BlockKey a = block_key({1, 2, 3}, 7);
  EXPECT_EQ(a, block_key({1, 2, 3}, 7));
  EXPECT_NE(a, block_key({3, 2, 1}, 7));
  EXPECT_NE(a, block_key({1, 2, 3}, 8));
  EXPECT_NE(a, block_key({1, 2}, 7));
  EXPECT_NE(a, block_key({1, 2, 3, 0}, 7));
  EXPECT_NE(block_key({}, 0), block_key({0}, 0));
}

TEST(BlockStore, CountsHitsMissesAndInsertions) {
  BlockStore store(1 << 20);
  EXPECT_EQ(store.find(key(1)), nullptr);
  BlockRef a = store.insert(key(1), random_block(4));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->key, key(1));
  EXPECT_EQ(a->bytes, block_bytes(4));
  EXPECT_EQ(store.find(key(1)), a);
  EXPECT_EQ(store.find(key(2)), nullptr);
  const StoreStats s = store.stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.insertions, 1);
  EXPECT_EQ(s.evictions, 0);
  EXPECT_EQ(s.entries, 1);
  EXPECT_EQ(s.bytes, block_bytes(4));
  EXPECT_EQ(s.budget_bytes, 1 << 20);
}

TEST(BlockStore, InsertingAStoredKeyReturnsTheStoredBlock) {
  BlockStore store(1 << 20);
  BlockRef first = store.insert(key(1), random_block(4));
  BlockRef second = store.insert(key(1), random_block(4));
  EXPECT_EQ(first, second);
  EXPECT_EQ(store.stats().insertions, 1);
  EXPECT_EQ(store.stats().entries, 1);
}

TEST(BlockStore, EvictsLeastRecentlyUsedFirst) {
  BlockStore store(3 * block_bytes(4));
  store.insert(key(1), random_block(4));
  store.insert(key(2), random_block(4));
  store.insert(key(3), random_block(4));
  ASSERT_NE(store.find(key(1)), nullptr);  // 2 is now the least recently used
  store.insert(key(4), random_block(4));
  EXPECT_EQ(store.stats().evictions, 1);
  EXPECT_EQ(store.find(key(2)), nullptr);
  EXPECT_NE(store.find(key(1)), nullptr);
  EXPECT_NE(store.find(key(3)), nullptr);
  EXPECT_NE(store.find(key(4)), nullptr);
  store.insert(key(3), random_block(4));  // re-inserting bumps too: 1 goes next
  store.insert(key(5), random_block(4));
  EXPECT_EQ(store.find(key(1)), nullptr);
  EXPECT_NE(store.find(key(3)), nullptr);
}

TEST(BlockStore, BudgetChangesEvictAtOnce) {
  BlockStore store(10 * block_bytes(4));
  for (int32_t i = 0; i < 6; ++i) store.insert(key(i), random_block(4));
  store.set_budget(2 * block_bytes(4));
  StoreStats s = store.stats();
  EXPECT_EQ(s.entries, 2);
  EXPECT_EQ(s.evictions, 4);
  EXPECT_EQ(s.bytes, 2 * block_bytes(4));
  EXPECT_NE(store.find(key(5)), nullptr);  // the newest stay
  EXPECT_NE(store.find(key(4)), nullptr);
  store.set_budget(10 * block_bytes(4));  // growing drops nothing
  EXPECT_EQ(store.stats().entries, 2);
}

TEST(BlockStore, BlockLargerThanTheBudgetIsReturnedButNotKept) {
  BlockStore store(block_bytes(4) - 1);
  for (int32_t i = 0; i < 5; ++i) {
    BlockRef b = store.insert(key(i), random_block(4));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->kv.tokens(), 4);
  }
  const StoreStats s = store.stats();
  EXPECT_EQ(s.insertions, 5);
  EXPECT_EQ(s.evictions, 5);
  EXPECT_EQ(s.entries, 0);
  EXPECT_EQ(s.bytes, 0);
}

TEST(BlockStore, EvictedBlocksLiveOnWhileInUse) {
  BlockStore store(block_bytes(4));
  const runtime::BlockKv kv = random_block(4);
  const at::Tensor k = kv.k.clone();
  BlockRef held = store.insert(key(1), kv);
  store.insert(key(2), random_block(4));  // evicts 1 from the store
  EXPECT_EQ(store.find(key(1)), nullptr);
  EXPECT_TRUE(at::equal(held->kv.k, k));  // the session's reference still works
}

TEST(BlockStore, ClearDropsEntriesAndKeepsCounters) {
  BlockStore store(1 << 20);
  store.insert(key(1), random_block(4));
  store.find(key(1));
  store.clear();
  const StoreStats s = store.stats();
  EXPECT_EQ(s.entries, 0);
  EXPECT_EQ(s.bytes, 0);
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.insertions, 1);
  EXPECT_EQ(store.find(key(1)), nullptr);
}

TEST(BlockStore, ScopesNeverSeeEachOthersBlocks) {
  BlockStore store(1 << 20);
  BlockRef a = store.insert(key(1), random_block(4), /*scope=*/7);
  EXPECT_EQ(store.find(key(1), 8), nullptr) << "the same key in another scope is a miss";
  EXPECT_EQ(store.find(key(1)), nullptr) << "and in the unscoped one";
  EXPECT_EQ(store.find(key(1), 7), a);
  BlockRef b = store.insert(key(1), random_block(4), 8);  // a collision across scopes: the newcomer takes it
  EXPECT_NE(b, a);
  EXPECT_EQ(store.find(key(1), 7), nullptr);
  EXPECT_EQ(store.find(key(1), 8), b);
  const ScopeStats seven = store.scope_stats(7), eight = store.scope_stats(8);
  EXPECT_EQ(seven.hits, 1);
  EXPECT_EQ(seven.misses, 1);
  EXPECT_EQ(seven.entries, 0);
  EXPECT_EQ(seven.bytes, 0);
  EXPECT_EQ(eight.hits, 1);
  EXPECT_EQ(eight.misses, 1);
  EXPECT_EQ(eight.bytes, block_bytes(4));
  EXPECT_EQ(store.scope_stats(99).misses, 0) << "a scope never seen";
}

TEST(BlockStore, AScopesMissesEvictOnlyItsOwnBlocksPastItsBudget) {
  BlockStore store(10 * block_bytes(4));
  store.set_scope_budget(3 * block_bytes(4));
  for (int32_t i = 0; i < 3; ++i) store.insert(key(i), random_block(4), /*scope=*/1);
  for (int32_t i = 100; i < 120; ++i) store.insert(key(i), random_block(4), /*scope=*/2);  // a flood of misses
  for (int32_t i = 0; i < 3; ++i) EXPECT_NE(store.find(key(i), 1), nullptr) << "scope 1 keeps its blocks";
  const ScopeStats flood = store.scope_stats(2);
  EXPECT_EQ(flood.entries, 3);
  EXPECT_EQ(flood.evictions, 17);
  EXPECT_NE(store.find(key(119), 2), nullptr) << "its newest stay";
  EXPECT_EQ(store.stats().bytes, 6 * block_bytes(4));
  store.set_scope_budget(block_bytes(4));  // shrinking evicts at once, in every scope
  EXPECT_EQ(store.scope_stats(1).entries, 1);
  EXPECT_EQ(store.scope_stats(2).entries, 1);
}

TEST(BlockStore, ThreadsShareOneStore) {
  // Budget for 8 of 32 keys: finds, inserts and evictions interleave.
  BlockStore store(8 * block_bytes(2));
  constexpr int kThreads = 4, kOps = 400;
  std::atomic<int64_t> finds{0}, found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      for (int i = 0; i < kOps; ++i) {
        const BlockKey k = key(static_cast<int32_t>(rng() % 32));
        ++finds;
        BlockRef b = store.find(k);
        if (!b) b = store.insert(k, random_block(2));
        else ++found;
        ASSERT_EQ(b->key, k);
        if (i % 100 == 0) store.set_budget(static_cast<int64_t>(4 + rng() % 8) * block_bytes(2));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const StoreStats s = store.stats();
  EXPECT_EQ(s.hits + s.misses, finds.load());
  EXPECT_EQ(s.hits, found.load());
  EXPECT_EQ(s.bytes, s.entries * block_bytes(2));
  EXPECT_LE(s.bytes, s.budget_bytes);
  EXPECT_EQ(s.insertions - s.evictions, s.entries);
}

}  // namespace
}  // namespace kvframe::kv_diff
