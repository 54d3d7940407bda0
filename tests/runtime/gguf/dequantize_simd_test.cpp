// The AVX2 and AVX-512 dequantization kernels (dequantize_simd.h) against the
// scalar ones, bit for bit, on random blocks. Each instruction set this CPU
// lacks is skipped.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dequantize_kernels.h"
#include "dequantize_simd.h"

namespace kvframe::runtime::gguf_detail {
namespace {

struct TypeCase {
  GgmlType type;
  void (*scalar)(const uint8_t*, float*, int64_t);
  std::vector<int> fp16_offsets;  // where a block keeps its fp16 scales
};

const std::vector<TypeCase>& type_cases() {
  static const std::vector<TypeCase> cases = {
      {GgmlType::kQ4_0, dequantize_q4_0, {0}},     {GgmlType::kQ4_1, dequantize_q4_1, {0, 2}},
      {GgmlType::kQ5_0, dequantize_q5_0, {0}},     {GgmlType::kQ5_1, dequantize_q5_1, {0, 2}},
      {GgmlType::kQ8_0, dequantize_q8_0, {0}},     {GgmlType::kQ2_K, dequantize_q2_k, {80, 82}},
      {GgmlType::kQ3_K, dequantize_q3_k, {108}},   {GgmlType::kQ4_K, dequantize_q4_k, {0, 2}},
      {GgmlType::kQ5_K, dequantize_q5_k, {0, 2}},  {GgmlType::kQ6_K, dequantize_q6_k, {208}},
  };
  return cases;
}

// Random bytes with every fp16 scale finite (exponent not all ones), so no
// result hangs on how a NaN's payload travels; one byte in front, so the
// blocks start at an odd address as they may in a GGUF file.
std::vector<uint8_t> random_blocks(const TypeCase& c, int64_t n_blocks, std::mt19937& rng) {
  const int64_t block_bytes = ggml_type_size(c.type).block_bytes;
  std::vector<uint8_t> data(static_cast<std::size_t>(1 + n_blocks * block_bytes));
  for (uint8_t& byte : data) byte = static_cast<uint8_t>(rng());
  for (int64_t b = 0; b < n_blocks; ++b) {
    for (int offset : c.fp16_offsets) {
      uint8_t& high = data[static_cast<std::size_t>(1 + b * block_bytes + offset + 1)];
      if ((high & 0x7C) == 0x7C) high &= 0xBF;
    }
  }
  return data;
}

class DequantizeSimd : public ::testing::TestWithParam<Isa> {};

TEST(DequantizeSimdKernels, EveryTypeHasAnAvx2AndAnAvx512Kernel) {
#if defined(__x86_64__)
  for (const TypeCase& c : type_cases()) {
    EXPECT_NE(simd_kernel(Isa::kAvx2, c.type), nullptr) << ggml_type_name(c.type);
    EXPECT_NE(simd_kernel(Isa::kAvx512, c.type), nullptr) << ggml_type_name(c.type);
  }
#else
  GTEST_SKIP() << "no SIMD kernels off x86-64";
#endif
}

TEST_P(DequantizeSimd, MatchesScalarBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "this CPU lacks it";
  std::mt19937 rng(1234);
  constexpr float kSentinel = 12345.0f;  // after the last element: must stay
  for (const TypeCase& c : type_cases()) {
    SCOPED_TRACE(ggml_type_name(c.type));
    const int64_t block_size = ggml_type_size(c.type).block_size;
    for (int64_t n_blocks : {1, 3, 7, 33}) {
      SCOPED_TRACE(std::to_string(n_blocks) + " blocks");
      for (int round = 0; round < 20; ++round) {
        const std::vector<uint8_t> data = random_blocks(c, n_blocks, rng);
        const int64_t n = n_blocks * block_size;
        std::vector<float> expected(static_cast<std::size_t>(n)), actual(static_cast<std::size_t>(n + 1), kSentinel);
        c.scalar(data.data() + 1, expected.data(), n_blocks);
        dequantize_with(isa, c.type, data.data() + 1, actual.data(), n);
        ASSERT_EQ(std::memcmp(actual.data(), expected.data(), expected.size() * sizeof(float)), 0)
            << "round " << round;
        ASSERT_EQ(actual.back(), kSentinel) << "wrote past the end";
      }
    }
  }
}

// dequantize() itself, on the best kernel this CPU has.
TEST(DequantizeSimdKernels, DequantizeUsesAKernelThatMatches) {
  std::mt19937 rng(99);
  for (const TypeCase& c : type_cases()) {
    SCOPED_TRACE(ggml_type_name(c.type));
    const std::vector<uint8_t> data = random_blocks(c, 5, rng);
    const int64_t n = 5 * ggml_type_size(c.type).block_size;
    std::vector<float> expected(static_cast<std::size_t>(n)), actual(static_cast<std::size_t>(n));
    c.scalar(data.data() + 1, expected.data(), 5);
    dequantize(c.type, data.data() + 1, actual.data(), n);
    EXPECT_EQ(std::memcmp(actual.data(), expected.data(), expected.size() * sizeof(float)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, DequantizeSimd, ::testing::Values(Isa::kPortable, Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& isa) {
                           switch (isa.param) {
                             case Isa::kAvx512: return std::string("Avx512");
                             case Isa::kAvx2: return std::string("Avx2");
                             case Isa::kPortable: break;
                           }
                           return std::string("Portable");
                         });

}  // namespace
}  // namespace kvframe::runtime::gguf_detail
