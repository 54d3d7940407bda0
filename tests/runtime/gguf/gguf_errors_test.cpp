// Malformed files: each gives the expected ErrorCode and a message naming the
// key or tensor at fault.
#include <limits>

#include "gguf_test_util.h"

namespace kvframe::runtime {
namespace {

using test::GgufWriter;

std::vector<uint8_t> encode(std::initializer_list<std::pair<int, uint64_t>> fields) {
  // (width in bytes, value) pairs, little-endian.
  std::vector<uint8_t> out;
  for (const auto& [width, value] : fields) {
    for (int i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  return out;
}

constexpr uint32_t kArrayType = 9;

// --- header ---

TEST(GgufErrors, BadMagic) {
  std::vector<uint8_t> bytes = GgufWriter().bytes();
  bytes[0] = 'P';
  EXPECT_TRUE(fails_with(parse_bytes(bytes), ErrorCode::kBadMagic, "not a GGUF file"));
  EXPECT_TRUE(fails_with(parse_bytes({'G', 'X'}), ErrorCode::kBadMagic, "not a GGUF file"));
}

TEST(GgufErrors, UnsupportedVersions) {
  EXPECT_TRUE(fails_with(parse_bytes(GgufWriter(1).bytes()), ErrorCode::kUnsupportedVersion,
                         "GGUF version 1 is not supported"));
  EXPECT_TRUE(fails_with(parse_bytes(GgufWriter(4).bytes()), ErrorCode::kUnsupportedVersion,
                         "GGUF version 4"));
  std::vector<uint8_t> big_endian = GgufWriter().bytes();
  patch<uint32_t>(big_endian, kVersionOffset, 0x03000000u);
  EXPECT_TRUE(fails_with(parse_bytes(big_endian), ErrorCode::kUnsupportedVersion, "big-endian"));
}

TEST(GgufErrors, AbsurdMetadataCount) {
  std::vector<uint8_t> bytes = GgufWriter().bytes();
  patch<uint64_t>(bytes, kMetadataCountOffset, uint64_t{1} << 60);
  EXPECT_TRUE(fails_with(parse_bytes(bytes), ErrorCode::kCorrupt, "the metadata section declares"));
}

TEST(GgufErrors, AbsurdTensorCount) {
  std::vector<uint8_t> bytes = GgufWriter().bytes();
  patch<uint64_t>(bytes, kTensorCountOffset, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(
      fails_with(parse_bytes(bytes), ErrorCode::kCorrupt, "the tensor info section declares"));
}

// --- metadata ---

TEST(GgufErrors, AbsurdKeyLength) {
  GgufWriter w;
  w.add_u32("general.alignment", 32);
  std::vector<uint8_t> bytes = w.bytes();
  patch<uint64_t>(bytes, kFirstEntryOffset, uint64_t{1} << 62);
  EXPECT_TRUE(fails_with(parse_bytes(bytes), ErrorCode::kTruncated, "metadata entry 0"));
}

TEST(GgufErrors, AbsurdStringLengthNamesTheKey) {
  GgufWriter w;
  w.add_string("general.name", "abc");
  std::vector<uint8_t> bytes = w.bytes();
  patch<uint64_t>(bytes, first_value_offset("general.name"), uint64_t{1} << 62);
  EXPECT_TRUE(fails_with(parse_bytes(bytes), ErrorCode::kTruncated,
                         "inside metadata key 'general.name'; the file is truncated"));
}

TEST(GgufErrors, AbsurdArrayCountNamesTheKey) {
  GgufWriter w;
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
  std::vector<uint8_t> bytes = w.bytes();
  patch<uint64_t>(bytes, first_value_offset("tokenizer.ggml.tokens") + 4, uint64_t{1} << 60);
  EXPECT_TRUE(fails_with(parse_bytes(bytes), ErrorCode::kCorrupt,
                         "metadata key 'tokenizer.ggml.tokens' declares 1152921504606846976"));
}

TEST(GgufErrors, NestedArraysAreRejected) {
  GgufWriter w;
  // An array of one array of one u32.
  w.add_raw("nested", kArrayType, encode({{4, kArrayType}, {8, 1}, {4, 4}, {8, 1}, {4, 5}}));
  EXPECT_TRUE(
      fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt, "'nested' is an array of arrays"));
}

TEST(GgufErrors, UndefinedValueTypesNameTheKey) {
  GgufWriter scalar;
  scalar.add_raw("odd", 13, {});
  EXPECT_TRUE(
      fails_with(parse_bytes(scalar.bytes()), ErrorCode::kCorrupt, "'odd' has value type 13"));
  GgufWriter array;
  array.add_raw("odd_array", kArrayType, encode({{4, 99}, {8, 0}}));
  EXPECT_TRUE(
      fails_with(parse_bytes(array.bytes()), ErrorCode::kCorrupt, "'odd_array' has value type 99"));
}

TEST(GgufErrors, BoolOtherThanZeroOrOne) {
  GgufWriter w;
  w.add_raw("tokenizer.ggml.add_bos_token", 7, {2});
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                         "'tokenizer.ggml.add_bos_token' holds the bool byte 2"));
}

TEST(GgufErrors, DuplicateKey) {
  GgufWriter w;
  w.add_u32("llama.block_count", 1);
  w.add_u32("llama.block_count", 2);
  EXPECT_TRUE(
      fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt, "'llama.block_count' appears twice"));
}

TEST(GgufErrors, U64ArrayElementBeyondInt64) {
  GgufWriter w;
  w.add_raw("big", kArrayType,
            encode({{4, 10}, {8, 1}, {8, std::numeric_limits<uint64_t>::max()}}));
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt, "'big' holds a u64"));
}

// --- tensor infos ---

TEST(GgufErrors, DimensionCount) {
  GgufWriter five;
  five.add_tensor("blk.0.five", {1, 1, 1, 1, 1}, GgmlType::kF32, std::vector<uint8_t>(4));
  EXPECT_TRUE(fails_with(parse_bytes(five.bytes()), ErrorCode::kCorrupt,
                         "tensor 'blk.0.five' has 5 dimensions"));
  GgufWriter none;
  none.add_tensor("scalar", {}, GgmlType::kF32, std::vector<uint8_t>(4));
  EXPECT_TRUE(fails_with(parse_bytes(none.bytes()), ErrorCode::kCorrupt,
                         "tensor 'scalar' has 0 dimensions"));
}

TEST(GgufErrors, ZeroNegativeAndOverflowingDims) {
  const std::vector<std::vector<int64_t>> bad_dims = {
      {4, 0}, {-1}, {int64_t{1} << 40, int64_t{1} << 40}, {int64_t{1} << 62, 2}};
  for (const auto& dims : bad_dims) {
    GgufWriter w;
    w.add_tensor("blk.3.attn_q.weight", dims, GgmlType::kF32, std::vector<uint8_t>(4));
    EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                           "tensor 'blk.3.attn_q.weight' has dimensions"));
  }
}

TEST(GgufErrors, SizeBeyondSixtyFourBits) {
  GgufWriter w;  // 2^62 F32 elements: 2^64 bytes
  w.add_tensor("huge", {int64_t{1} << 31, int64_t{1} << 31}, GgmlType::kF32, {});
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                         "tensor 'huge' has dimensions [2147483648, 2147483648], more bytes"));
}

TEST(GgufErrors, RowNotAWholeNumberOfBlocks) {
  GgufWriter w;  // 32 elements in all, but rows of 16
  w.add_tensor("blk.0.attn_k.weight", {16, 2}, GgmlType::kQ4_0, std::vector<uint8_t>(18));
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                         "tensor 'blk.0.attn_k.weight' has rows of 16 elements, not a multiple "
                         "of the Q4_0 block size 32"));
}

TEST(GgufErrors, TypesItCannotSize) {
  for (uint32_t type : {16u, 42u}) {  // IQ2_XXS, and a value ggml never used
    GgufWriter w;
    w.add_tensor("weird", {256}, static_cast<GgmlType>(type), std::vector<uint8_t>(66));
    EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kUnsupportedType,
                           "tensor 'weird' has ggml type " + std::to_string(type)));
  }
}

TEST(GgufErrors, DuplicateTensorName) {
  GgufWriter w;
  w.add_tensor_f32("output_norm.weight", {2}, {1, 2});
  w.add_tensor_f32("output_norm.weight", {2}, {3, 4});
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                         "tensor 'output_norm.weight' appears twice"));
}

// --- tensor data ---

TEST(GgufErrors, DataPastEndOfFile) {
  GgufWriter w;
  w.add_tensor_f32("blk.0.attn_q.weight", {8}, std::vector<float>(8, 1.0f));
  w.add_tensor_f32("blk.3.attn_q.weight", {8}, std::vector<float>(8, 2.0f));
  std::vector<uint8_t> bytes = w.bytes();
  const std::size_t full = bytes.size();
  bytes.pop_back();
  EXPECT_TRUE(fails_with(parse_bytes(bytes), ErrorCode::kTruncated,
                         "tensor 'blk.3.attn_q.weight': data ends at byte " + std::to_string(full) +
                             " but the file has " + std::to_string(full - 1) +
                             " bytes; the file is truncated — download it again"));
}

TEST(GgufErrors, OffsetsFarPastTheEnd) {
  GgufWriter far;
  far.add_tensor_f32("t", {1}, {1.0f});
  far.override_last_offset(uint64_t{1} << 63);
  EXPECT_TRUE(fails_with(parse_bytes(far.bytes()), ErrorCode::kTruncated, "tensor 't': data ends"));
  GgufWriter wrapping;
  wrapping.add_tensor_f32("t", {1}, {1.0f});
  wrapping.override_last_offset(std::numeric_limits<uint64_t>::max() - 31);
  EXPECT_TRUE(fails_with(parse_bytes(wrapping.bytes()), ErrorCode::kCorrupt,
                         "tensor 't': offset 18446744073709551584 lies beyond any file"));
}

TEST(GgufErrors, MisalignedOffset) {
  GgufWriter w;
  w.add_tensor_f32("a", {16}, std::vector<float>(16));
  w.add_tensor_f32("b", {16}, std::vector<float>(16));
  w.override_last_offset(68);
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                         "tensor 'b': offset 68 is not a multiple of the alignment 32"));
}

TEST(GgufErrors, OverlappingTensors) {
  GgufWriter w;  // a covers data bytes 0..64; b claims to start at 32
  w.add_tensor_f32("blk.0.a", {16}, std::vector<float>(16));
  w.add_tensor_f32("blk.0.b", {16}, std::vector<float>(16));
  w.override_last_offset(32);
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt,
                         "tensor 'blk.0.a' (data bytes 0 to 64) overlaps tensor 'blk.0.b'"));
}

}  // namespace
}  // namespace kvframe::runtime
