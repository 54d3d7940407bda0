#include "kvframe/kv_diff/assembled_kv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kv_test_util.h"

namespace kvframe::kv_diff {
namespace {

using testing::max_diff;
using testing::random_block;
using testing::reference_k;
using testing::stored;
using testing::tiny_model;

// The system prompt as Model::forward leaves it: 5 entries, after which
// positions continue at 9 (not 5: entries and positions are kept apart).
constexpr int64_t kPrefix = 5, kPrefixPosition = 9;

struct Session {
  AssembledKv kv;
  at::Tensor prefix_k, prefix_v;  // [L, KH, kPrefix, d]

  Session(const runtime::Model& model, int64_t capacity, Layout layout, int64_t initial_capacity = 0)
      : kv(AssembledKv::create(model.kv_shape(), model.rope(), capacity, layout, initial_capacity).value()) {
    kv.reset();
    const auto& c = model.config();
    prefix_k = at::randn({c.n_layer, c.n_head_kv, kPrefix, c.head_dim});
    prefix_v = at::randn({c.n_layer, c.n_head_kv, kPrefix, c.head_dim});
    for (int64_t l = 0; l < c.n_layer; ++l) {
      kv.cache().k[l].narrow(1, 0, kPrefix).copy_(prefix_k[l]);
      kv.cache().v[l].narrow(1, 0, kPrefix).copy_(prefix_v[l]);
    }
    kv.cache().length = kPrefix;
    kv.cache().next_position = kPrefixPosition;
    kv.seal_prefix();
  }

  at::Tensor k() const { return at::stack(kv.cache().k); }  // [L, KH, capacity, d]
  at::Tensor v() const { return at::stack(kv.cache().v); }

  // Query and reply tokens as Model::forward would append them, then dropped.
  void append_and_truncate(int64_t n) {
    runtime::KvCache& cache = kv.cache();
    n = std::min(n, cache.capacity - cache.length);
    for (size_t l = 0; l < cache.k.size(); ++l) {
      cache.k[l].narrow(1, cache.length, n).fill_(1e6);
      cache.v[l].narrow(1, cache.length, n).fill_(1e6);
    }
    const int64_t length = cache.length, position = cache.next_position;
    cache.length += n;
    cache.next_position += n;
    kv.truncate_to_assembly();
    EXPECT_EQ(cache.length, length);
    EXPECT_EQ(cache.next_position, position);
  }
};

// Everything the buffer promises after assemble(blocks).
::testing::AssertionResult holds(const Session& s, const std::vector<PlacedBlock>& blocks, const runtime::Rope& rope) {
  const AssembledKv& kv = s.kv;
  const runtime::KvCache& cache = kv.cache();
  const std::vector<SlotInfo> slots = kv.slots();
  if (slots.size() != blocks.size()) return ::testing::AssertionFailure() << "slot count " << slots.size();
  const at::Tensor k = s.k(), v = s.v();
  if (!at::equal(k.narrow(2, 0, kPrefix), s.prefix_k) || !at::equal(v.narrow(2, 0, kPrefix), s.prefix_v)) {
    return ::testing::AssertionFailure() << "the prefix changed";
  }
  at::Tensor padding = at::zeros({cache.capacity}, at::kBool);
  padding.narrow(0, kPrefix, cache.length - kPrefix).fill_(true);
  int64_t position = kPrefixPosition;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const SlotInfo& slot = slots[i];
    const runtime::BlockKv& base = blocks[i].kv->kv;
    const int64_t n = base.tokens();
    if (slot.id != blocks[i].id || slot.length != n || slot.position != position || slot.capacity < n ||
        slot.offset < kPrefix || slot.offset + slot.capacity > cache.length) {
      return ::testing::AssertionFailure() << "block " << i << ": slot at " << slot.offset << " (+" << slot.capacity
                                           << "), position " << slot.position << ", length " << slot.length;
    }
    if (!padding.narrow(0, slot.offset, slot.capacity).all().item<bool>()) {
      return ::testing::AssertionFailure() << "block " << i << "'s slot overlaps another";
    }
    padding.narrow(0, slot.offset, n).fill_(false);
    if (const float d = max_diff(k.narrow(2, slot.offset, n), reference_k(rope, base.k, position)); d > 1e-6) {
      return ::testing::AssertionFailure() << "block " << i << "'s keys are off by " << d;
    }
    if (!at::equal(v.narrow(2, slot.offset, n), base.v)) {
      return ::testing::AssertionFailure() << "block " << i << "'s values differ";
    }
    position += n;
  }
  if (cache.next_position != position || kv.tokens() != position - kPrefixPosition) {
    return ::testing::AssertionFailure() << "next_position " << cache.next_position << ", expected " << position;
  }
  if (cache.length != kv.high_water() || kv.prefix_length() != kPrefix) {
    return ::testing::AssertionFailure() << "length " << cache.length << ", high water " << kv.high_water();
  }
  // Undefined padding means no gaps.
  const at::Tensor have = cache.padding.defined() ? cache.padding : at::zeros({cache.capacity}, at::kBool);
  if (!at::equal(have, padding)) return ::testing::AssertionFailure() << "padding differs";
  return ::testing::AssertionSuccess();
}

// The keys and values by position (block order), whatever the memory layout.
std::pair<at::Tensor, at::Tensor> by_position(const Session& s) {
  std::vector<at::Tensor> k, v;
  const at::Tensor all_k = s.k(), all_v = s.v();
  for (const SlotInfo& slot : s.kv.slots()) {
    k.push_back(all_k.narrow(2, slot.offset, slot.length));
    v.push_back(all_v.narrow(2, slot.offset, slot.length));
  }
  return {at::cat(k, 2), at::cat(v, 2)};
}

// A session's blocks, changing the way game state does.
class Frames {
 public:
  explicit Frames(unsigned seed) : rng_(seed) {
    for (int i = 0; i < 6; ++i) blocks_.push_back({next_id_++, fresh(length())});
  }
  const std::vector<PlacedBlock>& blocks() const { return blocks_; }

  void next() {
    for (PlacedBlock& b : blocks_) {
      if (chance(0.15)) b.kv = fresh(chance(0.5) ? length() : std::clamp<int64_t>(b.kv->kv.tokens() + pick(-2, 2), 1, 12));
    }
    if (blocks_.size() < 10 && chance(0.3)) {
      blocks_.insert(blocks_.begin() + pick(0, static_cast<int>(blocks_.size())), {next_id_++, fresh(length())});
    }
    if (blocks_.size() > 1 && chance(0.2)) blocks_.erase(blocks_.begin() + pick(0, static_cast<int>(blocks_.size()) - 1));
    if (chance(0.2)) {
      std::swap(blocks_[pick(0, static_cast<int>(blocks_.size()) - 1)],
                blocks_[pick(0, static_cast<int>(blocks_.size()) - 1)]);
    }
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int64_t length() { return pick(1, 12); }
  BlockRef fresh(int64_t n) { return stored(random_block(n), serial_++); }

  std::mt19937 rng_;
  uint64_t next_id_ = 100, serial_ = 1;
  std::vector<PlacedBlock> blocks_;
};

TEST(AssembledKv, CreatesViewsOfOneBufferFromTheModel) {
  auto model = tiny_model();
  auto kv = AssembledKv::create(model->kv_shape(), model->rope(), 32, Layout::kSlack);
  ASSERT_TRUE(kv.ok()) << kv.error().to_string();
  const runtime::KvCache& cache = kv->cache();
  ASSERT_EQ(cache.k.size(), 2u);
  EXPECT_EQ(cache.capacity, 32);
  EXPECT_EQ(cache.k[1].sizes(), at::IntArrayRef({2, 32, 16}));
  EXPECT_EQ(cache.k[1].data_ptr<float>(), cache.k[0].data_ptr<float>() + 2 * 32 * 16);
  EXPECT_FALSE(cache.padding.defined());  // nothing to mask yet
  EXPECT_EQ(AssembledKv::create(model->kv_shape(), model->rope(), 0, Layout::kSlack).error().code, ErrorCode::kInvalidArgument);
}

TEST(AssembledKv, LayoutNames) {
  EXPECT_STREQ(layout_name(Layout::kSlack), "slack");
  EXPECT_STREQ(layout_name(Layout::kCompact), "compact");
  EXPECT_EQ(parse_layout("slack"), Layout::kSlack);
  EXPECT_EQ(parse_layout("compact"), Layout::kCompact);
  EXPECT_FALSE(parse_layout("packed").has_value());
}

// Both layouts through the same 150 random frames; every frame checked whole.
TEST(AssembledKv, RandomFramesKeepEveryBlockExact) {
  auto model = tiny_model();
  const runtime::Rope& rope = model->rope();
  // Room for 10 blocks of 12 with little to spare: the slack layout has to
  // compact now and then.
  Session slack(*model, 160, Layout::kSlack), compact(*model, 160, Layout::kCompact);
  Frames frames(42);
  AssembleStats slack_total, compact_total;
  int64_t compactions = 0;
  for (int frame = 0; frame < 150; ++frame) {
    for (Session* s : {&slack, &compact}) {
      auto stats = s->kv.assemble(frames.blocks());
      ASSERT_TRUE(stats.ok()) << stats.error().to_string();
      ASSERT_TRUE(holds(*s, frames.blocks(), rope)) << layout_name(s->kv.layout()) << ", frame " << frame;
      AssembleStats& total = s == &slack ? slack_total : compact_total;
      total.blocks_kept += stats->blocks_kept;
      total.blocks_written += stats->blocks_written;
      total.blocks_rotated += stats->blocks_rotated;
      total.bytes_written += stats->bytes_written;
      EXPECT_EQ(stats->blocks, stats->blocks_kept + stats->blocks_written + stats->blocks_rotated);
      compactions += stats->compacted;
    }
    const auto [slack_k, slack_v] = by_position(slack);
    const auto [compact_k, compact_v] = by_position(compact);
    ASSERT_TRUE(at::equal(slack_k, compact_k) && at::equal(slack_v, compact_v)) << "frame " << frame;
    slack.append_and_truncate(frame % 7);
    compact.append_and_truncate(frame % 7);
    frames.next();
  }
  // Every path ran.
  EXPECT_GT(compactions, 0);
  EXPECT_GT(slack_total.blocks_rotated, 0);
  EXPECT_GT(slack_total.blocks_kept, 0);
  EXPECT_GT(compact_total.blocks_kept, 0);
  EXPECT_EQ(compact_total.blocks_rotated, 0);  // compact moves only by rewriting
  EXPECT_LT(slack_total.bytes_written, compact_total.bytes_written);
}

TEST(AssembledKv, ABufferThatStartsSmallGrowsAndHoldsWhatAFullOneHolds) {
  auto model = tiny_model();
  const runtime::Rope& rope = model->rope();
  for (Layout layout : {Layout::kSlack, Layout::kCompact}) {
    Session grown(*model, 400, layout, /*initial_capacity=*/8), whole(*model, 400, layout);
    EXPECT_EQ(grown.kv.cache().capacity, 8);
    Frames frames(7);
    for (int frame = 0; frame < 60; ++frame) {
      for (Session* s : {&grown, &whole}) {
        auto stats = s->kv.assemble(frames.blocks());
        ASSERT_TRUE(stats.ok()) << stats.error().to_string();
        ASSERT_TRUE(holds(*s, frames.blocks(), rope)) << layout_name(layout) << ", frame " << frame;
      }
      const auto [grown_k, grown_v] = by_position(grown);
      const auto [whole_k, whole_v] = by_position(whole);
      ASSERT_TRUE(at::equal(grown_k, whole_k) && at::equal(grown_v, whole_v)) << "frame " << frame;
      ASSERT_TRUE(grown.kv.reserve(grown.kv.cache().length + 5).ok()) << "room for the query";
      grown.append_and_truncate(5);
      frames.next();
    }
    EXPECT_GT(grown.kv.cache().capacity, 8);
    EXPECT_LT(grown.kv.cache().capacity, 400) << "it holds what its frames need, not its whole budget";
    EXPECT_EQ(grown.kv.reserve(401).error().code, ErrorCode::kContextFull);
  }
}

// n blocks of `tokens` tokens, ids 0 .. n-1, each stored under the next serial.
std::vector<PlacedBlock> blocks_of(uint64_t n, int64_t tokens, uint64_t& serial) {
  std::vector<PlacedBlock> blocks;
  for (uint64_t id = 0; id < n; ++id) blocks.push_back({id, stored(random_block(tokens), serial++)});
  return blocks;
}

TEST(AssembledKv, SlackWritesLessWhenAnEarlyBlockGrows) {
  auto model = tiny_model();
  Session slack(*model, 256, Layout::kSlack), compact(*model, 256, Layout::kCompact);
  uint64_t serial = 1;
  std::vector<PlacedBlock> blocks = blocks_of(6, 16, serial);
  int64_t slack_bytes = 0, compact_bytes = 0;
  for (int frame = 0; frame < 40; ++frame) {
    // Block 1 (an event log, say) gains a token each frame.
    blocks[1].kv = stored(random_block(16 + frame), serial++);
    auto s = slack.kv.assemble(blocks);
    auto c = compact.kv.assemble(blocks);
    ASSERT_TRUE(s.ok() && c.ok());
    ASSERT_TRUE(holds(slack, blocks, model->rope()));
    ASSERT_TRUE(holds(compact, blocks, model->rope()));
    if (frame > 0) {
      EXPECT_EQ(c->blocks_written, 5);  // block 1 and all after it
      EXPECT_LE(s->blocks_written, 1);  // block 1 in place (or moved); the rest only rotate
      EXPECT_EQ(s->blocks_rotated, 4);
    }
    slack_bytes += s->bytes_written;
    compact_bytes += c->bytes_written;
  }
  EXPECT_LT(slack_bytes, compact_bytes * 7 / 10) << slack_bytes << " vs " << compact_bytes;
}

// A padding tensor exactly when some entry is masked: never in the compact
// layout (what keeps CUDA attention on its fused kernels), always in the
// slack one (each slot keeps spare entries), and none for an empty frame.
TEST(AssembledKv, PaddingOnlyWhenTheBufferHasGaps) {
  auto model = tiny_model();
  Session slack(*model, 256, Layout::kSlack), compact(*model, 256, Layout::kCompact);
  uint64_t serial = 1;
  std::vector<PlacedBlock> blocks = blocks_of(4, 8, serial);
  for (int frame = 0; frame < 6; ++frame) {
    if (frame > 0) blocks[1].kv = stored(random_block(8 - frame), serial++);  // block 1 shrinks
    ASSERT_TRUE(slack.kv.assemble(blocks).ok() && compact.kv.assemble(blocks).ok());
    ASSERT_TRUE(holds(slack, blocks, model->rope()) && holds(compact, blocks, model->rope()));
    EXPECT_FALSE(compact.kv.cache().padding.defined()) << "frame " << frame;
    EXPECT_TRUE(slack.kv.cache().padding.defined()) << "frame " << frame;
  }
  ASSERT_TRUE(slack.kv.assemble({}).ok());
  EXPECT_FALSE(slack.kv.cache().padding.defined());
}

TEST(AssembledKv, SlackCompactsWhenSpaceRunsOut) {
  auto model = tiny_model();
  Session s(*model, kPrefix + 40, Layout::kSlack);
  std::vector<PlacedBlock> blocks{{1, stored(random_block(10), 1)}, {2, stored(random_block(10), 2)}};
  auto first = s.kv.assemble(blocks);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(s.kv.slots()[0].capacity, 10 + 4);  // slack
  EXPECT_FALSE(first->compacted);
  blocks[0].kv = stored(random_block(15), 3);  // outgrows its slot, and the tail has no room
  auto second = s.kv.assemble(blocks);
  ASSERT_TRUE(second.ok()) << second.error().to_string();
  EXPECT_TRUE(second->compacted);
  EXPECT_TRUE(holds(s, blocks, model->rope()));
}

TEST(AssembledKv, OverflowIsContextFullAndKeepsTheLastAssembly) {
  auto model = tiny_model();
  for (Layout layout : {Layout::kSlack, Layout::kCompact}) {
    Session s(*model, 30, layout);
    std::vector<PlacedBlock> blocks{{1, stored(random_block(10), 1)}};
    ASSERT_TRUE(s.kv.assemble(blocks).ok());
    auto full = s.kv.assemble({{1, stored(random_block(10), 1)}, {2, stored(random_block(16), 2)}});
    ASSERT_FALSE(full.ok());
    EXPECT_EQ(full.error().code, ErrorCode::kContextFull);
    EXPECT_NE(full.error().message.find("larger capacity"), std::string::npos) << full.error().message;
    EXPECT_TRUE(holds(s, blocks, model->rope()));
  }
}

TEST(AssembledKv, RejectsMalformedFrames) {
  auto model = tiny_model();
  Session s(*model, 64, Layout::kSlack);
  const BlockRef a = stored(random_block(3), 1);
  auto code = [&](const std::vector<PlacedBlock>& blocks) { return s.kv.assemble(blocks).error().code; };
  EXPECT_EQ(code({{1, a}, {1, stored(random_block(3), 2)}}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{1, nullptr}}), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{1, stored({at::randn({2, 2, 3, 8}), at::randn({2, 2, 3, 8})}, 3)}}),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({{1, stored({at::randn({2, 2, 0, 16}), at::randn({2, 2, 0, 16})}, 4)}}),
            ErrorCode::kInvalidArgument);
}

TEST(AssembledKv, ResetAndResealStartOver) {
  auto model = tiny_model();
  Session s(*model, 64, Layout::kSlack);
  ASSERT_TRUE(s.kv.assemble({{1, stored(random_block(4), 1)}}).ok());
  s.kv.reset();
  EXPECT_EQ(s.kv.cache().length, 0);
  EXPECT_EQ(s.kv.cache().next_position, 0);
  EXPECT_EQ(s.kv.prefix_length(), 0);
  EXPECT_TRUE(s.kv.slots().empty());
  EXPECT_FALSE(s.kv.cache().padding.defined());
  // An empty frame after a prefix: nothing but the prefix.
  s.kv.cache().length = 3;
  s.kv.cache().next_position = 3;
  s.kv.seal_prefix();
  auto stats = s.kv.assemble({});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(s.kv.cache().length, 3);
  EXPECT_EQ(s.kv.cache().next_position, 3);
}

}  // namespace
}  // namespace kvframe::kv_diff
