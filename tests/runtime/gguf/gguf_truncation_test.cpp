// Every prefix of a valid file is an error (truncated or corrupt), never a
// crash; flipping any byte gives an error or a file that is safe to use.
#include "gguf_test_util.h"

namespace kvframe::runtime {
namespace {

using test::GgufValueType;
using test::GgufWriter;

// A small file using every metadata type and every dequantizable tensor type.
std::vector<uint8_t> rich_file() {
  GgufWriter w(3, 64);
  w.add_string("general.architecture", "llama");
  w.add_u8("u8", 1);
  w.add_i8("i8", -1);
  w.add_u16("u16", 2);
  w.add_i16("i16", -2);
  w.add_u32("llama.block_count", 1);
  w.add_i32("i32", -3);
  w.add_u64("u64", 4);
  w.add_i64("i64", -5);
  w.add_f32("f32", 0.5f);
  w.add_f64("f64", 0.25);
  w.add_bool("bool", true);
  w.add_string_array("tokenizer.ggml.tokens", {"<s>", "</s>", "a"});
  w.add_i32_array("tokenizer.ggml.token_type", {3, 3, 1});
  w.add_f32_array("scores", {0.0f, -1.0f});
  w.add_bool_array("bools", {true, false});
  w.add_int_array("u8s", GgufValueType::kU8, {1, 2});
  w.add_tensor_f32("f32", {4}, {1, 2, 3, 4});
  w.add_tensor_f32("f16", {4}, {1, 2, 3, 4}, GgmlType::kF16);
  w.add_tensor_f32("bf16", {2, 2}, {1, 2, 3, 4}, GgmlType::kBF16);
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ4_K,
                        GgmlType::kQ5_K, GgmlType::kQ6_K, GgmlType::kQ5_0}) {
    const GgmlTypeSize size = ggml_type_size(type);
    w.add_tensor("t." + ggml_type_name(type), {size.block_size}, type,
                 std::vector<uint8_t>(static_cast<std::size_t>(size.block_bytes), 0x11));
  }
  return w.bytes();
}

// Uses everything a parsed file offers, so a bad pointer or size shows up
// (under the sanitizers, as a report).
void use_everything(const GgufFile& file) {
  std::size_t touched = 0;
  for (const auto& [key, value] : file.metadata()) {
    touched += key.size() + value.index();
    EXPECT_EQ(file.find(key), &value);
  }
  for (const GgufTensorInfo& t : file.tensors()) {
    EXPECT_EQ(file.find_tensor(t.name), &t);
    if (!dequantize_supported(t.type)) continue;
    std::vector<float> out(static_cast<std::size_t>(t.n_elements()));
    EXPECT_FALSE(dequantize_tensor(t, out.data()).has_value());
    touched += out.size();
  }
  EXPECT_GT(touched + 1, 0u);
}

TEST(GgufTruncation, TheRichFileParses) {
  const std::vector<uint8_t> bytes = rich_file();
  const Result<GgufFile> file = parse_bytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->tensors().size(), 10u);
  EXPECT_EQ(file->metadata().size(), 18u);  // with general.alignment
  use_everything(*file);
}

TEST(GgufTruncation, EveryPrefixIsTruncatedOrCorrupt) {
  const std::vector<uint8_t> bytes = rich_file();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const Result<GgufFile> file = parse_bytes(bytes, size);
    ASSERT_FALSE(file.ok()) << "a prefix of " << size << " bytes parsed";
    const ErrorCode code = file.error().code;
    EXPECT_TRUE(code == ErrorCode::kTruncated || code == ErrorCode::kCorrupt)
        << size << " bytes: " << file.error().to_string();
    EXPECT_NE(file.error().message.find("<memory>: "), std::string::npos);
  }
}

TEST(GgufTruncation, FlippedBytesNeverBreakTheReader) {
  const std::vector<uint8_t> original = rich_file();
  for (std::size_t at = 0; at < original.size(); ++at) {
    for (int mask : {0x01, 0x80, 0xFF}) {
      std::vector<uint8_t> bytes = original;
      bytes[at] = static_cast<uint8_t>(bytes[at] ^ mask);
      const Result<GgufFile> file = parse_bytes(bytes);
      if (file.ok()) {
        use_everything(*file);
      } else {
        EXPECT_FALSE(file.error().message.empty());
      }
    }
  }
}

}  // namespace
}  // namespace kvframe::runtime
