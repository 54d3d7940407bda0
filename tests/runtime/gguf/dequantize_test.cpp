// Dequantization against gguf-py's reference values (fixtures/), type names
// and sizes.
#include <cmath>

#include "dequant_fixture.h"
#include "gguf_test_util.h"

namespace kvframe::runtime {
namespace {

using test::dequant_fixture;
using test::DequantCase;
using test::GgufWriter;

void expect_matches(const DequantCase& c, const std::vector<float>& actual) {
  ASSERT_EQ(actual.size(), c.expected.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < actual.size() && mismatches < 10; ++i) {
    if (!test::same_float(actual[i], c.expected[i])) {
      ++mismatches;
      float expected;
      std::memcpy(&expected, &c.expected[i], sizeof expected);
      ADD_FAILURE() << c.type_name << " element " << i << ": " << actual[i] << ", gguf-py "
                    << expected;
    }
  }
}

TEST(GgufDequantize, FixtureCoversEverySupportedType) {
  std::vector<GgmlType> covered;
  for (const DequantCase& c : dequant_fixture().cases) covered.push_back(c.type);
  for (GgmlType type :
       {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0,
        GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ2_K, GgmlType::kQ3_K,
        GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K}) {
    EXPECT_NE(std::find(covered.begin(), covered.end(), type), covered.end())
        << ggml_type_name(type);
  }
}

TEST(GgufDequantize, MatchesGgufPyBitForBit) {
  for (const DequantCase& c : dequant_fixture().cases) {
    SCOPED_TRACE(c.type_name);
    ASSERT_EQ(ggml_type_name(c.type), c.type_name);
    ASSERT_TRUE(dequantize_supported(c.type));
    const GgmlTypeSize size = ggml_type_size(c.type);
    ASSERT_EQ(static_cast<int64_t>(c.data.size()),
              c.n_elements / size.block_size * size.block_bytes);
    std::vector<float> out(static_cast<std::size_t>(c.n_elements));
    dequantize(c.type, c.data.data(), out.data(), c.n_elements);
    expect_matches(c, out);
  }
}

// The same blocks as tensors of a GGUF file, at an odd alignment so the data
// is not 4-byte aligned in memory: dequantize_tensor must not care.
TEST(GgufDequantize, TensorsInAFileMatchGgufPy) {
  GgufWriter w(3, 1);
  w.add_u8("pad", 0);  // shifts the data section to an odd address
  const auto& cases = dequant_fixture().cases;
  for (const DequantCase& c : cases) {
    const int64_t block = ggml_type_size(c.type).block_size;
    w.add_tensor("t." + c.type_name, {block, c.n_elements / block}, c.type, c.data);
  }
  const Result<GgufFile> file = parse_bytes(w.bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].type_name);
    const GgufTensorInfo& t = file->tensors()[i];
    std::vector<float> out(static_cast<std::size_t>(t.n_elements()));
    const Status status = dequantize_tensor(t, out.data());
    ASSERT_TRUE(status.ok()) << status.error().to_string();
    expect_matches(cases[i], out);
  }
}

TEST(GgufDequantize, UnsupportedTypeFillsNaN) {
  std::vector<uint8_t> block(36, 0);
  std::vector<float> out(32, 1.0f);
  EXPECT_FALSE(dequantize_supported(GgmlType::kQ8_1));
  dequantize(GgmlType::kQ8_1, block.data(), out.data(), 32);
  for (float v : out) EXPECT_TRUE(std::isnan(v));
}

TEST(GgufTypes, NamesSizesAndSupport) {
  struct Expected {
    GgmlType type;
    const char* name;
    int64_t block_size;
    int64_t block_bytes;
    bool supported;
  };
  // Sizes as GGML_QUANT_SIZES in gguf-py and sizeof(block_*) in ggml-common.h.
  const Expected expected[] = {
      {GgmlType::kF32, "F32", 1, 4, true},       {GgmlType::kF16, "F16", 1, 2, true},
      {GgmlType::kQ4_0, "Q4_0", 32, 18, true},   {GgmlType::kQ4_1, "Q4_1", 32, 20, true},
      {GgmlType::kQ5_0, "Q5_0", 32, 22, true},   {GgmlType::kQ5_1, "Q5_1", 32, 24, true},
      {GgmlType::kQ8_0, "Q8_0", 32, 34, true},   {GgmlType::kQ8_1, "Q8_1", 32, 36, false},
      {GgmlType::kQ2_K, "Q2_K", 256, 84, true},  {GgmlType::kQ3_K, "Q3_K", 256, 110, true},
      {GgmlType::kQ4_K, "Q4_K", 256, 144, true}, {GgmlType::kQ5_K, "Q5_K", 256, 176, true},
      {GgmlType::kQ6_K, "Q6_K", 256, 210, true}, {GgmlType::kQ8_K, "Q8_K", 256, 292, false},
      {GgmlType::kBF16, "BF16", 1, 2, true},
  };
  for (const Expected& e : expected) {
    EXPECT_EQ(ggml_type_name(e.type), e.name);
    EXPECT_EQ(ggml_type_size(e.type).block_size, e.block_size) << e.name;
    EXPECT_EQ(ggml_type_size(e.type).block_bytes, e.block_bytes) << e.name;
    EXPECT_EQ(dequantize_supported(e.type), e.supported) << e.name;
  }
  EXPECT_EQ(ggml_type_name(static_cast<GgmlType>(42)), "type 42");
  EXPECT_EQ(ggml_type_size(static_cast<GgmlType>(42)).block_size, 0);
  EXPECT_FALSE(dequantize_supported(static_cast<GgmlType>(42)));
}

TEST(GgufErrorCodes, ToStringPrefixesTheCodeName) {
  EXPECT_EQ((Error{ErrorCode::kTruncated, "x"}.to_string()), "truncated: x");
  EXPECT_STREQ(error_code_name(ErrorCode::kUnsupportedType), "unsupported_type");
  EXPECT_STREQ(error_code_name(ErrorCode::kInvalidArgument), "invalid_argument");
}

}  // namespace
}  // namespace kvframe::runtime
