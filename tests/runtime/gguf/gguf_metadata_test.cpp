// Metadata round trips (GgufWriter -> GgufFile::parse) for every GGUF value
// type, and the typed getters.
#include <cmath>
#include <limits>

#include "gguf_test_util.h"

namespace kvframe::runtime {
namespace {

using test::GgufValueType;
using test::GgufWriter;

template <class T>
T scalar(const GgufFile& file, const char* key) {
  const GgufValue* value = file.find(key);
  EXPECT_NE(value, nullptr) << key;
  if (value == nullptr || !std::holds_alternative<T>(*value)) {
    ADD_FAILURE() << key << " holds another alternative";
    return T{};
  }
  return std::get<T>(*value);
}

template <class T>
std::vector<T> array(const GgufFile& file, const char* key) {
  const GgufValue* value = file.find(key);
  if (value == nullptr || !std::holds_alternative<GgufArray>(*value) ||
      !std::holds_alternative<std::vector<T>>(std::get<GgufArray>(*value))) {
    ADD_FAILURE() << key << " is missing or not the expected array";
    return {};
  }
  return std::get<std::vector<T>>(std::get<GgufArray>(*value));
}

TEST(GgufMetadata, EveryScalarTypeRoundTrips) {
  GgufWriter w;
  w.add_u8("u8", 250);
  w.add_i8("i8", -120);
  w.add_u16("u16", 65000);
  w.add_i16("i16", -32000);
  w.add_u32("u32", 4000000000u);
  w.add_i32("i32", -2000000000);
  w.add_u64("u64", std::numeric_limits<uint64_t>::max());
  w.add_i64("i64", std::numeric_limits<int64_t>::min());
  w.add_f32("f32", 0.1f);
  w.add_f64("f64", 1e300);
  w.add_bool("yes", true);
  w.add_bool("no", false);
  w.add_string("text", std::string("h\xC3\xA9llo\0world", 12));
  w.add_string("empty", "");
  const Result<GgufFile> file = parse_bytes(w.bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();

  EXPECT_EQ(scalar<int64_t>(*file, "u8"), 250);
  EXPECT_EQ(scalar<int64_t>(*file, "i8"), -120);
  EXPECT_EQ(scalar<int64_t>(*file, "u16"), 65000);
  EXPECT_EQ(scalar<int64_t>(*file, "i16"), -32000);
  EXPECT_EQ(scalar<int64_t>(*file, "u32"), 4000000000);
  EXPECT_EQ(scalar<int64_t>(*file, "i32"), -2000000000);
  EXPECT_EQ(scalar<uint64_t>(*file, "u64"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(scalar<int64_t>(*file, "i64"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(scalar<double>(*file, "f32"), static_cast<double>(0.1f));
  EXPECT_EQ(scalar<double>(*file, "f64"), 1e300);
  EXPECT_TRUE(scalar<bool>(*file, "yes"));
  EXPECT_FALSE(scalar<bool>(*file, "no"));
  EXPECT_EQ(scalar<std::string>(*file, "text"), std::string("h\xC3\xA9llo\0world", 12));
  EXPECT_EQ(scalar<std::string>(*file, "empty"), "");
}

TEST(GgufMetadata, ArraysOfEveryElementTypeRoundTrip) {
  GgufWriter w;
  w.add_int_array("u8s", GgufValueType::kU8, {0, 255});
  w.add_int_array("i8s", GgufValueType::kI8, {-128, 127});
  w.add_int_array("u16s", GgufValueType::kU16, {0, 65535});
  w.add_int_array("i16s", GgufValueType::kI16, {-32768, 32767});
  w.add_int_array("u32s", GgufValueType::kU32, {0, 4294967295});
  w.add_i32_array("i32s", {-2147483647 - 1, 2147483647});
  w.add_int_array("u64s", GgufValueType::kU64, {0, std::numeric_limits<int64_t>::max()});
  w.add_int_array("i64s", GgufValueType::kI64, {std::numeric_limits<int64_t>::min(), 5});
  w.add_f32_array("f32s", {1.5f, -0.25f, std::numeric_limits<float>::infinity()});
  w.add_float_array("f64s", GgufValueType::kF64, {1e-300, -2.0});
  w.add_bool_array("bools", {true, false, true});
  w.add_string_array("strings", {"a", "", "\xF0\x9F\x99\x82"});
  w.add_string_array("none", {});
  const Result<GgufFile> file = parse_bytes(w.bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();

  EXPECT_EQ(array<int64_t>(*file, "u8s"), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(array<int64_t>(*file, "i8s"), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(array<int64_t>(*file, "u16s"), (std::vector<int64_t>{0, 65535}));
  EXPECT_EQ(array<int64_t>(*file, "i16s"), (std::vector<int64_t>{-32768, 32767}));
  EXPECT_EQ(array<int64_t>(*file, "u32s"), (std::vector<int64_t>{0, 4294967295}));
  EXPECT_EQ(array<int64_t>(*file, "i32s"), (std::vector<int64_t>{-2147483648LL, 2147483647}));
  EXPECT_EQ(array<int64_t>(*file, "u64s"),
            (std::vector<int64_t>{0, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(array<int64_t>(*file, "i64s"),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 5}));
  EXPECT_EQ(array<double>(*file, "f32s"),
            (std::vector<double>{1.5, -0.25, std::numeric_limits<double>::infinity()}));
  EXPECT_EQ(array<double>(*file, "f64s"), (std::vector<double>{1e-300, -2.0}));
  EXPECT_EQ(array<bool>(*file, "bools"), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(array<std::string>(*file, "strings"),
            (std::vector<std::string>{"a", "", "\xF0\x9F\x99\x82"}));
  EXPECT_TRUE(array<std::string>(*file, "none").empty());
}

TEST(GgufMetadata, KeepsFileOrderAndVersion) {
  GgufWriter w(2);
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_f32("llama.rope.freq_base", 10000.0f);
  const Result<GgufFile> file = parse_bytes(w.bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->version(), 2u);
  EXPECT_EQ(file->alignment(), 32u);
  EXPECT_EQ(file->path(), "<memory>");
  ASSERT_EQ(file->metadata().size(), 3u);
  EXPECT_EQ(file->metadata()[0].first, "general.architecture");
  EXPECT_EQ(file->metadata()[1].first, "llama.block_count");
  EXPECT_EQ(file->metadata()[2].first, "llama.rope.freq_base");
  EXPECT_EQ(file->find("absent"), nullptr);
}

class GgufGetters : public ::testing::Test {
 protected:
  void SetUp() override {
    GgufWriter w;
    w.add_string("name", "smol");
    w.add_u32("count", 30);
    w.add_u64("huge", std::numeric_limits<uint64_t>::max());
    w.add_u64("small_u64", 7);
    w.add_f32("eps", 1e-5f);
    w.add_bool("flag", true);
    w.add_string_array("tokens", {"<s>", "a"});
    w.add_i32_array("types", {1, 2, 3});
    w.add_f32_array("scores", {0.5f, -1.0f});
    Result<GgufFile> parsed = parse_bytes(w.bytes());
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    file_ = std::make_unique<GgufFile>(std::move(parsed).value());
  }
  std::unique_ptr<GgufFile> file_;
};

TEST_F(GgufGetters, ReturnValuesOfTheRequestedType) {
  EXPECT_EQ(file_->get_string("name").value(), "smol");
  EXPECT_EQ(file_->get_int("count").value(), 30);
  EXPECT_EQ(file_->get_int("small_u64").value(), 7);
  EXPECT_FLOAT_EQ(static_cast<float>(file_->get_float("eps").value()), 1e-5f);
  EXPECT_EQ(file_->get_float("count").value(), 30.0);  // integers are numbers too
  EXPECT_TRUE(file_->get_bool("flag").value());
  EXPECT_EQ(file_->get_string_array("tokens").value(), (std::vector<std::string>{"<s>", "a"}));
  EXPECT_EQ(file_->get_int_array("types").value(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(file_->get_float_array("scores").value(), (std::vector<double>{0.5, -1.0}));
  EXPECT_EQ(file_->get_float_array("types").value(), (std::vector<double>{1, 2, 3}));
}

TEST_F(GgufGetters, MissingKeyNamesIt) {
  EXPECT_TRUE(fails_with(file_->get_int("llama.block_count"), ErrorCode::kMissingKey,
                         "'llama.block_count'"));
  EXPECT_TRUE(fails_with(file_->get_string_array("tokenizer.ggml.tokens"), ErrorCode::kMissingKey,
                         "'tokenizer.ggml.tokens'"));
}

TEST_F(GgufGetters, WrongTypeNamesKeyAndBothTypes) {
  EXPECT_TRUE(fails_with(file_->get_int("name"), ErrorCode::kWrongKeyType,
                         "'name' holds a string, expected an integer"));
  EXPECT_TRUE(fails_with(file_->get_string("count"), ErrorCode::kWrongKeyType, "'count'"));
  EXPECT_TRUE(fails_with(file_->get_bool("count"), ErrorCode::kWrongKeyType, "'count'"));
  EXPECT_TRUE(fails_with(file_->get_float("name"), ErrorCode::kWrongKeyType, "'name'"));
  EXPECT_TRUE(fails_with(file_->get_string_array("types"), ErrorCode::kWrongKeyType,
                         "'types' holds an array of integers, expected an array of strings"));
  EXPECT_TRUE(fails_with(file_->get_int_array("tokens"), ErrorCode::kWrongKeyType, "'tokens'"));
  EXPECT_TRUE(fails_with(file_->get_float_array("name"), ErrorCode::kWrongKeyType, "'name'"));
}

TEST_F(GgufGetters, IntegersBeyondInt64AreRejected) {
  EXPECT_TRUE(fails_with(file_->get_int("huge"), ErrorCode::kWrongKeyType,
                         "'huge' holds the integer 18446744073709551615"));
  EXPECT_EQ(file_->get_float("huge").value(), 18446744073709551615.0);
}

}  // namespace
}  // namespace kvframe::runtime
