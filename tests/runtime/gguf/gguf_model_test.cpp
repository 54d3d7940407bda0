// The real default model (SmolLM2-135M-Instruct, Q4_1): the reader sees what
// gguf-py sees. Skipped when the model has not been fetched.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dequant_fixture.h"
#include "default_model.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {
namespace {

class GgufDefaultModel : public ::testing::Test {
 protected:
  void SetUp() override {
    KVFRAME_REQUIRE_DEFAULT_MODEL(path);
    Result<GgufFile> opened = GgufFile::open(path);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    file_ = std::make_unique<GgufFile>(std::move(opened).value());
  }
  std::unique_ptr<GgufFile> file_;
};

TEST_F(GgufDefaultModel, HasTheExpectedTensorsAndTypes) {
  EXPECT_EQ(file_->version(), 3u);
  ASSERT_EQ(file_->tensors().size(), 272u);
  std::map<GgmlType, int> count_by_type;
  for (const GgufTensorInfo& t : file_->tensors()) ++count_by_type[t.type];
  EXPECT_EQ(count_by_type[GgmlType::kQ4_1], 210);
  EXPECT_EQ(count_by_type[GgmlType::kF32], 61);
  EXPECT_EQ(count_by_type[GgmlType::kQ8_0], 1);
  const GgufTensorInfo* embd = file_->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, GgmlType::kQ8_0);
  EXPECT_EQ(embd->dims, (std::vector<int64_t>{576, 49152}));
}

TEST_F(GgufDefaultModel, HasTheExpectedMetadata) {
  EXPECT_EQ(file_->get_string("general.architecture").value(), "llama");
  EXPECT_EQ(file_->get_int("llama.block_count").value(), 30);
  EXPECT_EQ(file_->get_int("llama.embedding_length").value(), 576);
  const Result<std::vector<std::string>> tokens = file_->get_string_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok()) << tokens.error().to_string();
  EXPECT_EQ(tokens->size(), 49152u);
  EXPECT_EQ(file_->get_int_array("tokenizer.ggml.token_type").value().size(), 49152u);
  EXPECT_GT(file_->get_float("llama.rope.freq_base").value(), 0.0);
}

TEST_F(GgufDefaultModel, DequantizesLikeGgufPy) {
  const test::DequantFixture& fixture = test::dequant_fixture();
  ASSERT_FALSE(fixture.model_samples.empty())
      << "the fixture has no model samples: run make_dequant_fixture.py with the model present";
  std::string last_tensor;
  std::vector<float> values;
  for (const test::ModelSample& sample : fixture.model_samples) {
    const GgufTensorInfo* tensor = file_->find_tensor(sample.tensor);
    ASSERT_NE(tensor, nullptr) << sample.tensor;
    EXPECT_EQ(ggml_type_name(tensor->type), sample.type_name);
    if (sample.tensor != last_tensor) {
      values.resize(static_cast<std::size_t>(tensor->n_elements()));
      const Status status = dequantize_tensor(*tensor, values.data());
      ASSERT_TRUE(status.ok()) << status.error().to_string();
      last_tensor = sample.tensor;
    }
    for (std::size_t i = 0; i < sample.expected.size(); ++i) {
      const auto at = static_cast<std::size_t>(sample.start) + i;
      EXPECT_TRUE(test::same_float(values[at], sample.expected[i]))
          << sample.tensor << "[" << at << "] = " << values[at];
    }
  }
}

}  // namespace
}  // namespace kvframe::runtime
