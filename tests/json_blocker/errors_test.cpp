// Bad input: a typed error with the byte offset, never blocks.
#include <gtest/gtest.h>

#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker {
namespace {

struct BadInput {
  const char* name;
  std::string json;
  ErrorCode code;
  std::size_t offset;
};

void PrintTo(const BadInput& b, std::ostream* os) { *os << b.name; }

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, IsATypedErrorAtTheRightByte) {
  const BadInput& bad = GetParam();
  Rules rules;
  rules.limits.max_nesting = 8;
  rules.limits.max_document_bytes = 4096;
  auto result = partition(bad.json, rules);
  ASSERT_FALSE(result.ok()) << "accepted: " << bad.json;
  EXPECT_EQ(error_code_name(result.error().code), std::string(error_code_name(bad.code)))
      << result.error().to_string();
  EXPECT_EQ(result.error().offset, bad.offset) << result.error().to_string();
  EXPECT_FALSE(result.error().message.empty());
  // Validation alone reaches the same verdict.
  auto checked = Partitioner(rules).validate(bad.json);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code, result.error().code);
}

INSTANTIATE_TEST_SUITE_P(
    Partition, BadInputTest,
    ::testing::Values(
        BadInput{"empty", "", ErrorCode::kMalformedJson, 0},
        BadInput{"whitespace_only", "   \n", ErrorCode::kMalformedJson, 0},
        BadInput{"scalar_root", "42", ErrorCode::kMalformedJson, 0},
        BadInput{"missing_value", R"({"a":})", ErrorCode::kMalformedJson, 5},
        BadInput{"trailing_comma", R"({"a":[1,2,]})", ErrorCode::kMalformedJson, 10},
        BadInput{"missing_colon", R"({"a" 1})", ErrorCode::kMalformedJson, 5},
        BadInput{"bad_literal", R"({"a": tru})", ErrorCode::kMalformedJson, 6},
        BadInput{"bad_number", R"({"a": 01})", ErrorCode::kMalformedJson, 6},
        BadInput{"number_out_of_range", R"({"a": 1e400})", ErrorCode::kMalformedJson, 6},
        BadInput{"bad_escape", R"({"a": "x\q"})", ErrorCode::kMalformedJson, 6},
        BadInput{"truncated_object", R"({"a": {"b": 1})", ErrorCode::kMalformedJson, 14},
        BadInput{"unclosed_string", R"({"a": "abc})", ErrorCode::kMalformedJson, 6},
        BadInput{"trailing_content", R"({"a": 1} {"b": 2})", ErrorCode::kMalformedJson, 9},
        BadInput{"invalid_utf8", "{\"a\": \"ok\xff\"}", ErrorCode::kInvalidUtf8, 9},
        BadInput{"overlong_utf8", "{\"a\": \"\xc0\xaf\"}", ErrorCode::kInvalidUtf8, 7},
        BadInput{"surrogate_utf8", "{\"a\": \"\xed\xa0\x80\"}", ErrorCode::kInvalidUtf8, 7},
        BadInput{"nan", R"({"a": [1, NaN]})", ErrorCode::kMalformedJson, 10},
        BadInput{"infinity", R"({"a": {"b~c/d": -Infinity}})", ErrorCode::kMalformedJson, 16},
        BadInput{"too_deep", "{\"a\":[[[[[[[[1]]]]]]]]}", ErrorCode::kTooDeep, 12},
        BadInput{"too_large", "{\"a\": \"" + std::string(5000, 'x') + "\"}", ErrorCode::kTooLarge, 4096},
        BadInput{"duplicate_key", R"({"a": 1, "b": {"c": 1, "c": 2}})", ErrorCode::kDuplicateKey, 23},
        BadInput{"duplicate_key_in_dropped_free_leaf", R"({"u": [{"id": 1, "id": 2}]})",
                 ErrorCode::kDuplicateKey, 17}),
    [](const ::testing::TestParamInfo<BadInput>& param) { return std::string(param.param.name); });

TEST(Errors, ANaNOrInfinityIsNamedByItsPath) {
  auto nan = partition(R"({"units": [{"hp": 3}, {"hp": NaN}], "label": "NaN"})");
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.error().to_string(),
            "malformed_json at byte 29: /units/1/hp is NaN: JSON has no NaN or infinity (the serializer wrote "
            "JavaScript's literal); send a finite number, or null");
  auto infinity = partition(R"({"a": {"b~c/d": -Infinity}})");
  ASSERT_FALSE(infinity.ok());
  EXPECT_NE(infinity.error().message.find("/a/b~0c~1d is -Infinity"), std::string::npos) << infinity.error().message;
  EXPECT_TRUE(partition(R"({"a": "NaN", "Infinity": 1})").ok()) << "the words inside strings are text";
}

TEST(Errors, DuplicateKeysAreComparedUnescaped) {
  auto result = partition(R"({"a": 1, "\u0061": 2})");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kDuplicateKey);
}

TEST(Errors, ToStringNamesCodeAndOffset) {
  Error e{ErrorCode::kDuplicateKey, 12, "key twice"};
  EXPECT_EQ(e.to_string(), "duplicate_key at byte 12: key twice");
}

TEST(Errors, DroppedSubtreesAreStillValidated) {
  Rules rules;
  rules.drop = {"debug"};
  auto result = partition(R"({"debug": {"x": tru}, "a": 1})", rules);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kMalformedJson);
}

TEST(Errors, NullViewIsAnEmptyFrame) {
  auto result = partition(std::string_view{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kMalformedJson);
}

TEST(Errors, PartitionerKeepsWorkingAfterAnError) {
  Partitioner partitioner;
  EXPECT_FALSE(partitioner.partition(R"({"a": )").ok());
  auto good = partitioner.partition(R"({"a": 1})");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->size(), 1u);
}

}  // namespace
}  // namespace kvframe::json_blocker
