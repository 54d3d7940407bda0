// Array rules: one block per row, per element, or per declared chunk, whatever
// the array's size and depth; and the errors a bad rule gets.
#include <gtest/gtest.h>

#include "block_test_util.h"
#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {
namespace {

using testing::BadRules;
using testing::expect_refused_naming_the_entry;
using testing::ids;
using testing::must_partition;
using testing::texts;
using Strings = std::vector<std::string>;

Rules with_arrays(std::vector<ArrayRule> arrays) {
  Rules rules;
  rules.arrays = std::move(arrays);
  return rules;
}

TEST(ArrayCut, RowsAreOneBlockEachEvenInASmallDeepDocument) {
  // Defaults alone keep this document whole (it is under min_split_bytes).
  auto p = must_partition(R"({"world": {"turn": 3, "map": {"grid": [[1, 2], [3, 4]]}}})",
                          with_arrays({{"world.map.grid", ArrayCut::kRows, 0}}));
  EXPECT_EQ(texts(p), (Strings{"world.turn: 3", "world.map.grid[0]: [1,2]", "world.map.grid[1]: [3,4]"}));
}

TEST(ArrayCut, RowsStayWholeOverTheBudget) {
  Rules rules = with_arrays({{"grid", ArrayCut::kRows, 0}});
  rules.max_block_bytes = 16;
  auto p = must_partition(R"({"grid": [[1000, 2000, 3000, 4000, 5000], [{"a": "0123456789abcdef"}]]})", rules);
  EXPECT_EQ(texts(p), (Strings{"grid[0]: [1000,2000,3000,4000,5000]", R"(grid[1]: [{"a":"0123456789abcdef"}])"}));
}

TEST(ArrayCut, ElementsAreNeverMergedButBigOnesMaySplit) {
  Rules rules = with_arrays({{"xs", ArrayCut::kElements, 0}});
  rules.max_block_bytes = 24;
  auto p = must_partition(R"({"xs": [1, 2, {"id": "f1", "cargo": 12, "note": "0123456789"}], "n": 5})", rules);
  EXPECT_EQ(ids(p), (Strings{"xs[0]", "xs[1]", "xs[id=f1].{id..cargo}", "xs[id=f1].note", "n"}));
}

TEST(ArrayCut, ChunksAreAlignedToMultiplesOfTheirSize) {
  auto p = must_partition(R"({"tiles": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]})",
                          with_arrays({{"tiles", ArrayCut::kChunk, 4}}));
  EXPECT_EQ(texts(p), (Strings{"tiles[0..3]: [0,1,2,3]", "tiles[4..7]: [4,5,6,7]", "tiles[8..9]: [8,9]"}));
}

TEST(ArrayCut, AnElementThatCannotMergeDoesNotShiftTheChunksAfterIt) {
  Rules rules = with_arrays({{"tiles", ArrayCut::kChunk, 3}});
  rules.merge_scalar_bytes = 8;
  auto p = must_partition(R"({"tiles": [0, 1, "a long label", 3, 4, 5, {"x": 6}, 7, 8]})", rules);
  EXPECT_EQ(ids(p), (Strings{"tiles[0..1]", "tiles[2]", "tiles[3..5]", "tiles[6]", "tiles[7..8]"}));
}

TEST(ArrayCut, ADeclaredChunkIgnoresTheByteBudget) {
  Rules rules = with_arrays({{"tiles", ArrayCut::kChunk, 4}});
  rules.max_block_bytes = 16;
  auto p = must_partition(R"({"tiles": [10000, 20000, 30000, 40000, 50000]})", rules);
  EXPECT_EQ(ids(p), (Strings{"tiles[0..3]", "tiles[4]"}));
}

TEST(ArrayCut, TheFirstMatchingRuleAppliesAndObjectsAreLeftAlone) {
  const Rules rules = with_arrays({{"a", ArrayCut::kChunk, 2}, {"*", ArrayCut::kElements, 0}});
  auto p = must_partition(R"({"a": [1, 2, 3], "b": [4, 5], "c": {"x": 1, "y": 2}})", rules);
  EXPECT_EQ(ids(p), (Strings{"a[0..1]", "a[2]", "b[0]", "b[1]", "c"}));
}

TEST(ArrayCut, AnEmptyCutArrayIsStillABlock) {
  auto p = must_partition(R"({"grid": [], "turn": 1})", with_arrays({{"grid", ArrayCut::kRows, 0}}));
  EXPECT_EQ(texts(p), (Strings{"grid: []", "turn: 1"}));
}

TEST(ArrayCut, ReadFromARulesFile) {
  auto rules = parse_rules(R"({"arrays": [{"path": "grid", "cut": "rows"}, {"path": "fleets", "cut": "elements"},
                                          {"path": "tiles", "chunk": 21}, {"cut": "chunk", "chunk": 4, "path": "t2"}]})");
  ASSERT_TRUE(rules.ok()) << rules.error().to_string();
  ASSERT_EQ(rules->arrays.size(), 4u);
  EXPECT_EQ(rules->arrays[0].cut, ArrayCut::kRows);
  EXPECT_EQ(rules->arrays[1].cut, ArrayCut::kElements);
  EXPECT_EQ(rules->arrays[2].cut, ArrayCut::kChunk);
  EXPECT_EQ(rules->arrays[2].chunk, 21u);
  EXPECT_EQ(rules->arrays[3].cut, ArrayCut::kChunk);
  EXPECT_EQ(rules->arrays[3].path, "t2");
  EXPECT_STREQ(array_cut_name(ArrayCut::kRows), "rows");
}

TEST(ArrayCut, BadRulesAreTypedErrorsNamingTheRule) {
  for (const BadRules& bad : {
           BadRules{R"({"arrays": [{"path": "tiles", "chunk": 0}]})", R"(arrays[0] ("tiles"))"},
           BadRules{R"({"arrays": [{"path": "g", "cut": "rows"}, {"path": "tiles", "chunk": -3}]})",
                    R"(arrays[1] ("tiles"))"},
           BadRules{R"({"arrays": [{"path": "g", "cut": "chunk"}]})", R"(arrays[0] ("g"))"},
           BadRules{R"({"arrays": [{"path": "g", "cut": "columns"}]})", R"(arrays[0] ("g"))"},
           BadRules{R"({"arrays": [{"path": "g", "cut": "rows", "chunk": 21}]})", R"(arrays[0] ("g"))"},
           BadRules{R"({"arrays": [{"path": "g", "chunk": 21, "cut": "rows"}]})", R"(arrays[0] ("g"))"},
           BadRules{R"({"arrays": [{"path": "g", "split": "rows"}]})", R"(arrays[0] ("g"))"},
           BadRules{R"({"arrays": [{"path": "g[x]", "cut": "rows"}]})", R"(arrays[0] ("g[x]"))"},
           BadRules{R"({"arrays": [{"path": 3, "cut": "rows"}]})", "arrays[0]"},
           BadRules{R"({"arrays": ["grid"]})", "arrays[0]"},
       }) {
    expect_refused_naming_the_entry(bad);
  }
}

TEST(ArrayCut, RulesBuiltInCodeAreCheckedToo) {
  for (const ArrayRule& bad : {ArrayRule{"g", ArrayCut::kChunk, 0}, ArrayRule{"g", ArrayCut::kRows, 5}}) {
    const Rules rules = with_arrays({bad});
    const Status checked = check_rules(rules);
    ASSERT_FALSE(checked.ok());
    EXPECT_NE(checked.error().message.find(R"(arrays[0] ("g"))"), std::string::npos) << checked.error().message;
    EXPECT_FALSE(Partitioner(rules).partition(R"({"g": [1]})").ok());
  }
}

}  // namespace
}  // namespace kvframe::json_blocker
