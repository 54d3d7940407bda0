// partition(): one test per rule, plus ids, canonical text and byte ranges.
#include <gtest/gtest.h>

#include "block_test_util.h"
#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {
namespace {

using testing::eager_rules;
using testing::ids;
using testing::must_partition;
using testing::texts;
using Strings = std::vector<std::string>;

TEST(Partition, SeedExampleChipsArePathPrefixedMinifiedJson) {
  Rules rules = eager_rules();
  rules.pin = {"state.chips.*"};
  auto p = must_partition(R"({"state": {"chips": {"p1": {"bet": 10, "remain": 990},
                                                   "p2": { "bet" : 50 , "remain" : 950 }}}})",
                          rules);
  EXPECT_EQ(texts(p), (Strings{R"(state.chips.p1: {"bet":10,"remain":990})",
                               R"(state.chips.p2: {"bet":50,"remain":950})"}));
  EXPECT_EQ(ids(p), (Strings{"state.chips.p1", "state.chips.p2"}));
  EXPECT_EQ(p[1].json(), R"({"bet":50,"remain":950})");
  EXPECT_EQ(p[1].pointer, "/state/chips/p2");
}

TEST(Partition, SmallDocumentIsOneRootBlock) {
  auto p = must_partition(R"({"a": 1, "b": [1, 2]})");
  EXPECT_EQ(texts(p), (Strings{R"($: {"a":1,"b":[1,2]})"}));
  EXPECT_EQ(ids(p), (Strings{"$"}));
  EXPECT_EQ(p[0].pointer, "");
}

TEST(Partition, MaxDepthBoundsSplitting) {
  const char* json = R"({"a": {"b": {"c": {"d": 1}}, "x": {"y": 2}}})";
  Rules rules = eager_rules();
  rules.max_depth = 1;
  EXPECT_EQ(ids(must_partition(json, rules)), (Strings{"a"}));
  rules.max_depth = 2;
  EXPECT_EQ(ids(must_partition(json, rules)), (Strings{"a.b", "a.x"}));
  rules.max_depth = 3;
  EXPECT_EQ(ids(must_partition(json, rules)), (Strings{"a.b.c", "a.x"}));  // a.x holds no container
}

TEST(Partition, ContainersBelowMinSplitBytesStayWhole) {
  const char* json = R"({"small": {"a": {"x": 1}}, "big": {"a": {"x": 1}, "b": {"pad": "0123456789012345678901234567890123456789"}}})";
  Rules rules;
  rules.max_depth = 2;
  rules.min_split_bytes = 60;
  EXPECT_EQ(ids(must_partition(json, rules)), (Strings{"small", "big.a", "big.b"}));
}

TEST(Partition, ArrayOfObjectsIsOneBlockPerElementByKeyField) {
  auto p = must_partition(
      R"({"units": [{"id": "hero_7", "hp": 5}, {"name": "bob"}, {"uid": 12}, {"hp": 1}]})",
      eager_rules());
  EXPECT_EQ(ids(p), (Strings{"units[id=hero_7]", "units[name=bob]", "units[uid=12]", "units[3]"}));
  EXPECT_EQ(p[0].text, R"(units[id=hero_7]: {"id":"hero_7","hp":5})");
  EXPECT_EQ(p[3].pointer, "/units/3");
}

TEST(Partition, KeyFieldOrderDecidesAndCanBeConfigured) {
  const char* json = R"({"units": [{"name": "bob", "id": "u1"}, {"name": "amy"}]})";
  EXPECT_EQ(ids(must_partition(json, eager_rules())), (Strings{"units[id=u1]", "units[name=amy]"}));
  Rules rules = eager_rules();
  rules.key_fields = {"name"};
  EXPECT_EQ(ids(must_partition(json, rules)), (Strings{"units[name=bob]", "units[name=amy]"}));
  rules.key_fields = {};
  EXPECT_EQ(ids(must_partition(json, rules)), (Strings{"units[0]", "units[1]"}));
}

TEST(Partition, DuplicateKeyValuesStillGetUniqueIds) {
  auto p = must_partition(R"({"u": [{"id": "a", "v": 1}, {"id": "a", "v": 2}, {"id": "a", "v": 3}]})",
                          eager_rules());
  EXPECT_EQ(ids(p), (Strings{"u[id=a]", "u[id=a#2]", "u[id=a#3]"}));
}

TEST(Partition, OddKeysAndKeyValuesAreQuoted) {
  auto p = must_partition(R"({"a b": {"x": 1}, "c.d": {"x": 2}, "u": [{"id": "x]y", "v": 1}], "ключ": {"x": 3}})",
                          eager_rules());
  EXPECT_EQ(ids(p), (Strings{R"(["a b"])", R"(["c.d"])", R"(u[id="x]y"])", "ключ"}));
}

TEST(Partition, AdjacentSmallScalarsMergeIntoOneRun) {
  auto p = must_partition(
      R"({"match": {"id": "m1", "tick": 7, "phase": "mid", "score": {"a": 1}, "clock": 9.5}})",
      eager_rules());
  EXPECT_EQ(ids(p), (Strings{"match.{id..phase}", "match.score", "match.clock"}));
  EXPECT_EQ(p[0].text, R"(match: {"id":"m1","tick":7,"phase":"mid"})");
  EXPECT_EQ(p[0].kind, BlockKind::kMemberRun);
  EXPECT_EQ(p[0].pointer, "/match");
  EXPECT_EQ(p[2].text, "match.clock: 9.5");
  EXPECT_EQ(p[2].kind, BlockKind::kValue);
}

TEST(Partition, LargeScalarsGetTheirOwnBlock) {
  Rules rules = eager_rules();
  rules.merge_scalar_bytes = 8;
  auto p = must_partition(R"({"o": {"a": 1, "lore": "a long story told here", "b": 2, "c": 3, "x": {}}})",
                          rules);
  EXPECT_EQ(ids(p), (Strings{"o.a", "o.lore", "o.{b..c}", "o.x"}));
}

TEST(Partition, OverBudgetObjectIsSplitWhateverItsDepth) {
  Rules rules;
  rules.max_depth = 1;
  rules.max_block_bytes = 40;
  auto p = must_partition(
      R"({"a": {"b": {"c": {"x": "0123456789", "y": "0123456789", "z": "0123456789"}}}})", rules);
  // a, a.b and a.b.c are all over 40 bytes; the scalars merge up to the budget.
  EXPECT_EQ(ids(p), (Strings{"a.b.c.{x..y}", "a.b.c.z"}));
  for (const Block& b : p.blocks()) EXPECT_LE(b.json().size(), 40u) << b.text;
}

TEST(Partition, OverBudgetScalarArrayIsChunked) {
  Rules rules;
  rules.max_block_bytes = 64;
  rules.scalar_array_chunk = 4;
  std::string json = R"({"grid": [)";
  for (int i = 0; i < 16; ++i) json += (i ? "," : "") + std::to_string(1000 + i);
  json += R"(], "pad": ")" + std::string(60, 'x') + R"("})";
  auto p = must_partition(json, rules);
  EXPECT_EQ(ids(p), (Strings{"grid[0..3]", "grid[4..7]", "grid[8..11]", "grid[12..15]", "pad"}));
  EXPECT_EQ(p[1].text, "grid[4..7]: [1004,1005,1006,1007]");
  EXPECT_EQ(p[1].kind, BlockKind::kElementRun);
}

TEST(Partition, PinnedPathsAreOwnBlocksAndForceTheirAncestorsToSplit) {
  Rules rules;  // defaults would keep this small document whole
  rules.pin = {"state.chips.p2", "state.pot"};
  auto p = must_partition(R"({"state": {"pot": 60, "round": "flop", "chips": {"p1": {"bet": 10}, "p2": {"bet": 50}}}})",
                          rules);
  EXPECT_EQ(ids(p), (Strings{"state.pot", "state.round", "state.chips.p1", "state.chips.p2"}));
}

TEST(Partition, PinDeepInsideALeafIsHonoured) {
  Rules rules;
  rules.pin = {"units[*].inventory"};
  auto p = must_partition(R"({"units": [{"id": "a", "hp": 1, "inventory": ["sword"]}]})", rules);
  EXPECT_EQ(ids(p), (Strings{"units[id=a].{id..hp}", "units[id=a].inventory"}));
}

TEST(Partition, DroppedPathsAppearNowhere) {
  Rules rules = eager_rules();
  rules.drop = {"**.timestamp", "debug", "units[*].ai_*"};
  auto p = must_partition(R"({"timestamp": 1, "debug": {"fps": 60},
      "units": [{"id": "a", "timestamp": 5, "ai_state": "x", "ai_goal": "y", "hp": 3}],
      "deep": {"x": {"timestamp": 9, "v": 1}}})",
                          rules);
  EXPECT_EQ(texts(p), (Strings{R"(units[id=a]: {"id":"a","hp":3})", R"(deep.x: {"v":1})"}));
}

TEST(Partition, DropPatternsMatchKeyedAndIndexedElements) {
  Rules rules = eager_rules();
  rules.drop = {"u[id=b]", "v[1]"};
  auto p = must_partition(R"({"u": [{"id": "a"}, {"id": "b"}], "v": [{"k": 0}, {"k": 1}, {"k": 2}]})", rules);
  EXPECT_EQ(ids(p), (Strings{"u[id=a]", "v[0]", "v[2]"}));
}

TEST(Partition, SourceRangesCoverMembersKeysIncluded) {
  const std::string json = R"({"state": {"pot": 60, "chips": {"p1": {"bet": 10}}}, "log": [{"id": "e1"}]})";
  Rules rules = eager_rules();
  auto p = must_partition(json, rules);
  ASSERT_EQ(ids(p), (Strings{"state.pot", "state.chips", "log[id=e1]"}));
  auto at = [&](std::size_t i) { return json.substr(p[i].source.begin, p[i].source.size()); };
  EXPECT_EQ(at(0), R"("pot": 60)");
  EXPECT_EQ(at(1), R"("chips": {"p1": {"bet": 10}})");
  EXPECT_EQ(at(2), R"({"id": "e1"})");
  EXPECT_EQ(p.block_at(json.find("60")), 0);
  EXPECT_EQ(p.block_at(json.find("e1")), 2);
  EXPECT_EQ(p.block_at(0), -1);
}

TEST(Partition, HashIsXxh3OfTextAndEqualTextHashesEqual) {
  auto a = must_partition(R"({"x": {"k": [1, 2]}, "y": {"k": [1,2]}})", eager_rules());
  auto b = must_partition(R"({"x": {"k":[1,2]}})", eager_rules());
  EXPECT_NE(a[0].hash, a[1].hash);  // different path prefix
  EXPECT_EQ(a[0].hash, b[0].hash);
  EXPECT_EQ(a[0].text, b[0].text);
}

TEST(Partition, StringEscapesAndNumbersAreKeptByteForByte) {
  auto p = must_partition(R"({"s": "a\"b\u00e9\n", "n": 1.50, "e": -2E+3, "t": true, "z": null})");
  EXPECT_EQ(p[0].json(), R"({"s":"a\"b\u00e9\n","n":1.50,"e":-2E+3,"t":true,"z":null})");
}

TEST(Partition, RootArrayIsSplitLikeAnyArray) {
  Rules rules = eager_rules();
  rules.max_depth = 1;
  auto p = must_partition(R"([{"id": "a", "v": {"x": 1}}, {"id": "b", "v": {"x": 2}}])", rules);
  EXPECT_EQ(ids(p), (Strings{"[id=a]", "[id=b]"}));
}

TEST(Partition, EmptyContainersAreBlocksToo) {
  auto p = must_partition(R"({"a": {}, "b": [], "c": {"d": {"pad": 1}}})", eager_rules());
  EXPECT_EQ(texts(p), (Strings{"a: {}", "b: []", R"(c.d: {"pad":1})"}));
}

TEST(Partition, PartitionerIsReusableAcrossFramesOfDifferentSizes) {
  Partitioner partitioner(eager_rules());
  std::string big = R"({"a": {"x": ")" + std::string(100000, 'y') + R"("}, "b": {"c": {"d": 1}}})";
  for (int i = 0; i < 3; ++i) {
    auto small = partitioner.partition(R"({"a": {"x": 1}, "b": {"c": 2}})");
    ASSERT_TRUE(small.ok());
    EXPECT_EQ(ids(small.value()), (Strings{"a", "b"}));
    auto large = partitioner.partition(big);
    ASSERT_TRUE(large.ok());
    EXPECT_EQ(large->size(), 2u);
  }
}

}  // namespace
}  // namespace kvframe::json_blocker
