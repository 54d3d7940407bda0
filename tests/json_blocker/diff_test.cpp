// diff(): every kind of change, the counts and the changed fraction.
#include <gtest/gtest.h>

#include <map>

#include "block_test_util.h"
#include "kvframe/json_blocker/diff.h"

namespace kvframe::json_blocker {
namespace {

using testing::eager_rules;
using testing::must_partition;

std::map<std::string, Change> by_id(const Partition& prev, const Partition& cur, const FrameDiff& d) {
  std::map<std::string, Change> out;
  for (const BlockChange& c : d.blocks) {
    const Block& b = c.current >= 0 ? cur[static_cast<std::size_t>(c.current)]
                                    : prev[static_cast<std::size_t>(c.previous)];
    out[std::string(b.id)] = c.change;
  }
  return out;
}

TEST(Diff, SeedExampleOnlyP2Changes) {
  Rules rules = eager_rules();
  rules.pin = {"state.chips.*"};
  auto prev = must_partition(R"({"state": {"round": "flop", "chips": {"p1": {"bet": 10, "remain": 990}, "p2": {"bet": 10, "remain": 990}}}})", rules);
  auto cur = must_partition(R"({"state": {"round": "flop", "chips": {"p1": {"bet": 10, "remain": 990}, "p2": {"bet": 50, "remain": 950}}}})", rules);
  const FrameDiff d = diff(prev, cur);
  EXPECT_EQ(d.changed, 1u);
  EXPECT_EQ(d.unchanged, 2u);
  EXPECT_EQ(d.added + d.removed + d.moved, 0u);
  EXPECT_EQ(by_id(prev, cur, d)["state.chips.p2"], Change::kChanged);
  EXPECT_EQ(d.bytes_changed, cur[2].text.size());
  EXPECT_EQ(d.bytes_total, cur.text_bytes());
  EXPECT_NEAR(d.changed_fraction(), double(cur[2].text.size()) / double(cur.text_bytes()), 1e-12);
  EXPECT_EQ(d.dirty(), 1u);
}

TEST(Diff, IdenticalFramesAreAllUnchanged) {
  const char* json = R"({"u": [{"id": "a", "x": {}}, {"id": "b"}], "m": {"t": 1}})";
  auto a = must_partition(json, eager_rules());
  auto b = must_partition(json, eager_rules());
  const FrameDiff d = diff(a, b);
  EXPECT_EQ(d.unchanged, a.size());
  EXPECT_EQ(d.bytes_changed, 0u);
  EXPECT_EQ(d.changed_fraction(), 0.0);
}

TEST(Diff, AddedRemovedAndChanged) {
  auto prev = must_partition(R"({"u": [{"id": "a", "hp": 1}, {"id": "b", "hp": 2}, {"id": "c", "hp": 3}]})", eager_rules());
  auto cur = must_partition(R"({"u": [{"id": "a", "hp": 1}, {"id": "c", "hp": 4}, {"id": "d", "hp": 5}]})", eager_rules());
  const FrameDiff d = diff(prev, cur);
  auto kinds = by_id(prev, cur, d);
  EXPECT_EQ(kinds["u[id=a]"], Change::kUnchanged);
  EXPECT_EQ(kinds["u[id=b]"], Change::kRemoved);
  EXPECT_EQ(kinds["u[id=c]"], Change::kChanged);
  EXPECT_EQ(kinds["u[id=d]"], Change::kAdded);
  EXPECT_EQ(d.blocks.size(), 4u);  // three current, then one removed
  EXPECT_EQ(d.blocks.back().change, Change::kRemoved);
  EXPECT_EQ(d.blocks.back().previous, 1);
  EXPECT_EQ(d.blocks.back().current, -1);
}

TEST(Diff, MovedIsOnlyWhatLeftTheCommonOrder) {
  // c jumps to the front: a, b, d keep their relative order; only c moved.
  auto prev = must_partition(R"({"u": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}]})", eager_rules());
  auto cur = must_partition(R"({"u": [{"id": "c"}, {"id": "a"}, {"id": "b"}, {"id": "d"}]})", eager_rules());
  const FrameDiff d = diff(prev, cur);
  auto kinds = by_id(prev, cur, d);
  EXPECT_EQ(d.moved, 1u);
  EXPECT_EQ(kinds["u[id=c]"], Change::kMoved);
  EXPECT_EQ(d.unchanged, 3u);
  EXPECT_EQ(d.bytes_changed, 0u);  // moved blocks keep their text
}

TEST(Diff, InsertionShiftsNothingIntoMoved) {
  auto prev = must_partition(R"({"u": [{"id": "a"}, {"id": "b"}]})", eager_rules());
  auto cur = must_partition(R"({"u": [{"id": "z"}, {"id": "a"}, {"id": "b"}]})", eager_rules());
  const FrameDiff d = diff(prev, cur);
  EXPECT_EQ(d.added, 1u);
  EXPECT_EQ(d.moved, 0u);
  EXPECT_EQ(d.unchanged, 2u);
}

TEST(Diff, ChangedWinsOverMoved) {
  auto prev = must_partition(R"({"u": [{"id": "a", "v": 1}, {"id": "b", "v": 1}]})", eager_rules());
  auto cur = must_partition(R"({"u": [{"id": "b", "v": 2}, {"id": "a", "v": 1}]})", eager_rules());
  const FrameDiff d = diff(prev, cur);
  auto kinds = by_id(prev, cur, d);
  EXPECT_EQ(kinds["u[id=b]"], Change::kChanged);
  EXPECT_EQ(d.changed + d.moved + d.unchanged, 2u);
}

TEST(Diff, AgainstNothingEverythingIsAdded) {
  auto cur = must_partition(R"({"a": {"x": 1}, "b": {"y": 2}})", eager_rules());
  const FrameDiff d = diff(Partition{}, cur);
  EXPECT_EQ(d.added, cur.size());
  EXPECT_EQ(d.changed_fraction(), 1.0);
}

TEST(Diff, ChangeNames) {
  EXPECT_STREQ(change_name(Change::kMoved), "moved");
  EXPECT_STREQ(change_name(Change::kUnchanged), "unchanged");
}

}  // namespace
}  // namespace kvframe::json_blocker
