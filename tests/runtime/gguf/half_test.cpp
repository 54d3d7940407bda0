// fp16 / bf16 conversions: the reader's (half.h, with and without F16C) and
// the writer's rounding (fp32_to_fp16 / fp32_to_bf16).
#include <cmath>
#include <cstring>

#include "gguf_writer.h"
#include <gtest/gtest.h>
#include "half.h"

namespace kvframe::runtime::gguf_detail {
namespace {

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

TEST(GgufHalf, PortableConversionKnownValues) {
  EXPECT_EQ(fp16_to_fp32_portable(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_fp32_portable(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_fp32_portable(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_fp32_portable(0x0400), 0x1p-14f);       // smallest normal
  EXPECT_EQ(fp16_to_fp32_portable(0x0001), 0x1p-24f);       // smallest subnormal
  EXPECT_EQ(fp16_to_fp32_portable(0x83FF), -1023 * 0x1p-24f);
  EXPECT_EQ(bits(fp16_to_fp32_portable(0x8000)), 0x80000000u);  // -0
  EXPECT_EQ(fp16_to_fp32_portable(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_fp32_portable(0xFC00), -INFINITY);
  EXPECT_EQ(bits(fp16_to_fp32_portable(0x7E00)), 0x7FC00000u);  // quiet NaN
  EXPECT_EQ(bits(fp16_to_fp32_portable(0x7D01)), 0x7FA02000u);  // payload kept
}

TEST(GgufHalf, HardwareAndPortableAgreeOnEveryValue) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float portable = fp16_to_fp32_portable(half);
    const float used = fp16_to_fp32(half);
    if (std::isnan(portable)) {
      EXPECT_TRUE(std::isnan(used)) << std::hex << h;
    } else {
      EXPECT_EQ(bits(used), bits(portable)) << std::hex << h;
    }
  }
}

TEST(GgufHalf, Bf16IsTheTopHalfOfFp32) {
  EXPECT_EQ(bf16_to_fp32(0x3F80), 1.0f);
  EXPECT_EQ(bits(bf16_to_fp32(0x0001)), 0x00010000u);  // subnormal
  EXPECT_EQ(bf16_to_fp32(0xFF80), -INFINITY);
}

TEST(GgufHalf, WriterRoundTripsEveryFp16Value) {
  for (uint32_t h = 0; h <= 0xFFFF; ++h) {
    const auto half = static_cast<uint16_t>(h);
    const float f = fp16_to_fp32_portable(half);
    if (std::isnan(f)) continue;
    EXPECT_EQ(test::fp32_to_fp16(f), half) << std::hex << h;
  }
}

TEST(GgufHalf, WriterRoundsToNearestEven) {
  EXPECT_EQ(test::fp32_to_fp16(1.0f + 0x1p-11f), 0x3C00);      // tie: down to even
  EXPECT_EQ(test::fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);  // tie: up to even
  EXPECT_EQ(test::fp32_to_fp16(65519.0f), 0x7BFF);
  EXPECT_EQ(test::fp32_to_fp16(65520.0f), 0x7C00);              // rounds to infinity
  EXPECT_EQ(test::fp32_to_fp16(0x1p-25f), 0x0000);              // tie: down to zero
  EXPECT_EQ(test::fp32_to_fp16(3 * 0x1p-25f), 0x0002);          // subnormal tie: up to even
  EXPECT_EQ(test::fp32_to_fp16(0x1p-14f - 0x1p-26f), 0x0400);   // rounds up into normals
  EXPECT_EQ(test::fp32_to_fp16(-1e-10f), 0x8000);
  EXPECT_EQ(test::fp32_to_fp16(NAN) & 0x7E00, 0x7E00);
  EXPECT_EQ(test::fp32_to_bf16(1.0f + 0x1p-8f), 0x3F80);        // tie: down to even
  EXPECT_EQ(test::fp32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);    // tie: up to even
  EXPECT_EQ(test::fp32_to_bf16(NAN) & 0x7FC0, 0x7FC0);
}

}  // namespace
}  // namespace kvframe::runtime::gguf_detail
