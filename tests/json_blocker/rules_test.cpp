// Rules files: parsing, defaults and the errors a typo gets.
#include <gtest/gtest.h>

#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/rules.h"

namespace kvframe::json_blocker {
namespace {

TEST(Rules, EmptyObjectGivesDefaults) {
  auto rules = parse_rules("{}");
  ASSERT_TRUE(rules.ok());
  const Rules defaults;
  EXPECT_EQ(rules->max_depth, defaults.max_depth);
  EXPECT_EQ(rules->max_block_bytes, defaults.max_block_bytes);
  EXPECT_EQ(rules->key_fields, defaults.key_fields);
  EXPECT_TRUE(rules->pin.empty());
  EXPECT_TRUE(rules->drop.empty());
  EXPECT_EQ(rules->order, BlockOrder::kDocument);
}

TEST(Rules, ReadsEveryField) {
  auto rules = parse_rules(R"({"max_depth": 3, "min_split_bytes": 10, "max_block_bytes": 500,
      "merge_scalar_bytes": 32, "scalar_array_chunk": 8, "key_fields": ["uid"],
      "pin": ["state.chips.*"], "drop": ["**.timestamp", "debug"], "order": "volatile_last",
      "limits": {"max_document_bytes": 1000, "max_nesting": 16}})");
  ASSERT_TRUE(rules.ok()) << rules.error().to_string();
  EXPECT_EQ(rules->max_depth, 3);
  EXPECT_EQ(rules->min_split_bytes, 10u);
  EXPECT_EQ(rules->max_block_bytes, 500u);
  EXPECT_EQ(rules->merge_scalar_bytes, 32u);
  EXPECT_EQ(rules->scalar_array_chunk, 8u);
  EXPECT_EQ(rules->key_fields, std::vector<std::string>{"uid"});
  EXPECT_EQ(rules->pin, std::vector<std::string>{"state.chips.*"});
  EXPECT_EQ(rules->drop.size(), 2u);
  EXPECT_EQ(rules->limits.max_document_bytes, 1000u);
  EXPECT_EQ(rules->limits.max_nesting, 16);
  EXPECT_EQ(rules->order, BlockOrder::kVolatileLast);
  EXPECT_STREQ(block_order_name(rules->order), "volatile_last");
}

TEST(Rules, UnknownFieldIsAnErrorNamingIt) {
  auto rules = parse_rules(R"({"max_dept": 3})");
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.error().code, ErrorCode::kInvalidRules);
  EXPECT_NE(rules.error().message.find("max_dept"), std::string::npos);
}

TEST(Rules, WrongTypesAndRangesAreErrors) {
  for (const char* bad : {R"({"max_depth": "2"})", R"({"max_depth": -1})",
                          R"({"max_block_bytes": 2})", R"({"scalar_array_chunk": 0})",
                          R"({"pin": "state"})", R"({"drop": [1]})",
                          R"({"limits": {"max_nesting": 5000}})", R"({"limits": {"nesting": 5}})",
                          R"({"order": "random"})", R"({"order": 1})",
                          R"([1])", R"({"max_depth": 1)"}) {
    auto rules = parse_rules(bad);
    EXPECT_FALSE(rules.ok()) << bad;
    if (!rules.ok()) {
      EXPECT_EQ(rules.error().code, ErrorCode::kInvalidRules) << bad;
    }
  }
}

TEST(Rules, BadPatternsAreErrors) {
  for (const char* bad : {R"({"pin": [""]})", R"({"pin": ["a..b"]})", R"({"drop": ["a[1"]})",
                          R"({"drop": ["a[x]"]})", R"({"drop": ["a[=x]"]})", R"({"drop": [".a"]})"}) {
    auto rules = parse_rules(bad);
    EXPECT_FALSE(rules.ok()) << bad;
  }
}

TEST(Rules, RulesBuiltInCodeAreCheckedToo) {
  Rules bad_pattern;
  bad_pattern.drop = {"units[id="};
  Rules too_deep;
  too_deep.limits.max_nesting = 100000;
  Rules tiny_budget;
  tiny_budget.max_block_bytes = 1;
  for (const Rules& rules : {bad_pattern, too_deep, tiny_budget}) {
    ASSERT_FALSE(check_rules(rules).ok());
    Partitioner partitioner(rules);  // must not throw
    auto result = partitioner.partition(R"({"a": 1})");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidRules);
    EXPECT_FALSE(partitioner.validate(R"({"a": 1})").ok());
  }
  EXPECT_TRUE(check_rules(Rules{}).ok());
}

TEST(Rules, MissingFileIsAnIoError) {
  auto rules = load_rules("/nonexistent/rules.json");
  ASSERT_FALSE(rules.ok());
  EXPECT_EQ(rules.error().code, ErrorCode::kIo);
}

TEST(Rules, ShippedRulesFilesParse) {
  for (const char* path : {"/examples/moba/moba.rules.json", "/examples/holdem/holdem.rules.json",
                           "/examples/grid/grid.rules.json"}) {
    auto rules = load_rules(std::string(KVFRAME_SOURCE_DIR) + path);
    EXPECT_TRUE(rules.ok()) << path << ": " << (rules.ok() ? "" : rules.error().to_string());
  }
}

}  // namespace
}  // namespace kvframe::json_blocker
