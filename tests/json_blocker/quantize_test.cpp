// Quantize rules: numbers rounded or bucketed before blocks are made, so the
// diff sees only changes a reader would notice; and the errors a bad rule gets.
#include <gtest/gtest.h>

#include <cmath>

#include "block_test_util.h"
#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/frame_stream.h"
#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {
namespace {

using testing::BadRules;
using testing::expect_refused_naming_the_entry;
using testing::must_partition;
using testing::texts;
using Strings = std::vector<std::string>;

Quantize round_to(std::string path, int digits) {
  Quantize rule;
  rule.path = std::move(path);
  rule.round_digits = digits;
  return rule;
}

Quantize levels_at(std::string path, std::vector<double> edges) {
  Quantize rule;
  rule.path = std::move(path);
  rule.levels = std::move(edges);
  return rule;
}

Rules with_quantize(std::vector<Quantize> quantize) {
  Rules rules;
  rules.quantize = std::move(quantize);
  return rules;
}

TEST(Quantize, RoundsToDigitsTiesToEvenWithoutTrailingZeros) {
  const Rules rules = with_quantize({round_to("a[*]", 0), round_to("b[*]", 2)});
  auto p = must_partition(R"({"a": [1.4, 2.6, 3.5, 4.5, -0.2, 7, 1e2], "b": [3.14159, 2.5, 2.999, 0.10]})",
                          rules);
  EXPECT_EQ(texts(p), (Strings{R"($: {"a":[1,3,4,4,0,7,100],"b":[3.14,2.5,3,0.1]})"}));
}

TEST(Quantize, IntegersAreKeptAsWrittenEvenPastDoublePrecision) {
  auto p = must_partition(R"({"id": 12345678901234567891, "n": -0})", with_quantize({round_to("*", 0)}));
  EXPECT_EQ(texts(p), (Strings{R"($: {"id":12345678901234567891,"n":-0})"}));
}

TEST(Quantize, LevelsBecomeTheLowerEdgeOfTheirBucket) {
  auto p = must_partition(R"({"food": [-5, 0, 9.9, 10, 39.99, 40, 1000]})",
                          with_quantize({levels_at("food", {0, 10, 20, 40, 80, 160})}));
  EXPECT_EQ(texts(p), (Strings{R"($: {"food":[0,0,0,10,20,40,160]})"}));
}

TEST(Quantize, EdgesAreWrittenInFixedNotation) {
  auto p = must_partition(R"({"x": [0.7, 250000, 3]})", with_quantize({levels_at("x[*]", {0.5, 100000})}));
  EXPECT_EQ(texts(p), (Strings{R"($: {"x":[0.5,100000,0.5]})"}));
}

TEST(Quantize, AppliesToEveryNumberAtOrBelowThePathAndNothingElse) {
  auto p = must_partition(
      R"({"fleet": {"pos": {"x": 1.26, "y": [2.74]}, "name": "f 1.5", "ok": true, "z": null}, "other": 1.26})",
      with_quantize({round_to("fleet", 1)}));
  EXPECT_EQ(texts(p),
            (Strings{R"($: {"fleet":{"pos":{"x":1.3,"y":[2.7]},"name":"f 1.5","ok":true,"z":null},"other":1.26})"}));
}

TEST(Quantize, TheFirstListedRuleMatchingTheNumberOrAnAncestorApplies) {
  const Rules rules = with_quantize(
      {round_to("fleets[*].x", 2), round_to("fleets[*].x", 1), round_to("fleets[*]", 3), round_to("**", 0)});
  auto p = must_partition(R"({"fleets": [{"x": 1.23456, "y": 1.23456}], "t": 1.23456})", rules);
  // x: the first rule; y: fleets[*] (its parent), listed before **; t: only **.
  EXPECT_EQ(texts(p), (Strings{R"($: {"fleets":[{"x":1.23,"y":1.235}],"t":1})"}));
}

TEST(Quantize, BlocksChangeOnlyWhenTheCoarseValueDoes) {
  Rules rules = with_quantize({levels_at("grid", {0, 10, 20, 40})});
  rules.arrays = {ArrayRule{"grid", ArrayCut::kRows, 0}};
  auto first = must_partition(R"({"grid": [[1.5, 12.25], [30.1, 45]]})", rules);
  auto drift = must_partition(R"({"grid": [[2.75, 19.5], [39.9, 47.125]]})", rules);
  auto cross = must_partition(R"({"grid": [[2.75, 20.5], [39.9, 47.125]]})", rules);
  EXPECT_EQ(texts(first), (Strings{"grid[0]: [0,10]", "grid[1]: [20,40]"}));
  EXPECT_EQ(diff(first, drift).dirty(), 0u);
  const FrameDiff crossed = diff(drift, cross);
  EXPECT_EQ(crossed.changed, 1u);
  EXPECT_EQ(crossed.blocks[0].change, Change::kChanged);
}

TEST(Quantize, LongerTextThanTheInputStillFits) {
  // Each one-byte "1" becomes a seven-byte edge: the text outgrows the input.
  std::string json = R"({"v": [)", expected = "v: [";
  for (int i = 0; i < 5000; ++i) {
    json += i ? ",1" : "1";
    expected += i ? ",1000000" : "1000000";
  }
  json += R"(], "small": {"w": [1, 2]}})";
  Rules rules = with_quantize({levels_at("v", {1000000})});
  rules.max_block_bytes = 1 << 20;
  auto p = must_partition(json, rules);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(p[0].text == expected + "]") << "the edges were not all written";  // no 40 KB diff printed
  EXPECT_EQ(p[1].text, R"(small: {"w":[1,2]})");
  EXPECT_EQ(json.substr(p[1].source.begin, p[1].source.size()), R"("small": {"w": [1, 2]})");
}

TEST(Quantize, PatchedFramesAreQuantizedToo) {
  FrameStream stream(with_quantize({round_to("hp", 0)}));
  ASSERT_TRUE(stream.push_whole(R"({"hp": 10.2, "pad": "x"})").ok());
  auto same = stream.push_patch(R"({"hp": 10.4})", PatchFormat::kMergePatch);
  ASSERT_TRUE(same.ok()) << same.error().to_string();
  EXPECT_EQ(same->dirty(), 0u);
  EXPECT_EQ(stream.current()[0].text, R"($: {"hp":10,"pad":"x"})");
}

TEST(Quantize, ReadFromARulesFile) {
  auto rules = parse_rules(R"({"quantize": [{"path": "grid[*][*]", "round": 0},
                                            {"levels": [0, 10.5, 20], "path": "food"}]})");
  ASSERT_TRUE(rules.ok()) << rules.error().to_string();
  ASSERT_EQ(rules->quantize.size(), 2u);
  EXPECT_EQ(rules->quantize[0].path, "grid[*][*]");
  EXPECT_EQ(rules->quantize[0].round_digits, 0);
  EXPECT_TRUE(rules->quantize[0].levels.empty());
  EXPECT_EQ(rules->quantize[1].levels, (std::vector<double>{0, 10.5, 20}));
  EXPECT_FALSE(rules->quantize[1].round_digits.has_value());
}

// Each bad rule is an invalid_rules error whose message names the entry.
TEST(Quantize, BadRulesAreTypedErrorsNamingTheRule) {
  for (const BadRules& bad : {
           BadRules{R"({"quantize": [{"path": "hp", "round": -1}]})", R"(quantize[0] ("hp"))"},
           BadRules{R"({"quantize": [{"path": "hp", "round": 16}]})", R"(quantize[0] ("hp"))"},
           BadRules{R"({"quantize": [{"path": "hp", "round": 1.5}]})", R"(quantize[0] ("hp"))"},
           BadRules{R"({"quantize": [{"path": "a", "round": 0}, {"path": "g", "levels": [0, 20, 10]}]})",
                    R"(quantize[1] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g", "levels": [0, 10, 10]}]})", R"(quantize[0] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g", "levels": []}]})", R"(quantize[0] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g", "levels": ["low"]}]})", R"(quantize[0] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g", "round": 0, "levels": [1]}]})", R"(quantize[0] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g"}]})", R"(quantize[0] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g", "digits": 2}]})", R"(quantize[0] ("g"))"},
           BadRules{R"({"quantize": [{"path": "g[", "round": 0}]})", R"(quantize[0] ("g["))"},
           BadRules{R"({"quantize": [{"round": 0}]})", "quantize[0]"},
           BadRules{R"({"quantize": {"path": "g", "round": 0}})", "quantize"},
       }) {
    expect_refused_naming_the_entry(bad);
  }
}

TEST(Quantize, RulesBuiltInCodeAreCheckedToo) {
  for (const Quantize& bad : {levels_at("g", {0, std::nan("")}), levels_at("g", {5, 1}), round_to("g", 99),
                              Quantize{"g", std::nullopt, {}}}) {
    const Rules rules = with_quantize({bad});
    const Status checked = check_rules(rules);
    ASSERT_FALSE(checked.ok());
    EXPECT_NE(checked.error().message.find(R"(quantize[0] ("g"))"), std::string::npos) << checked.error().message;
    auto result = Partitioner(rules).partition(R"({"g": 1})");
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.error().code, ErrorCode::kInvalidRules);
  }
}

}  // namespace
}  // namespace kvframe::json_blocker
