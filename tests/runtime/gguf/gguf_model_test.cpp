// Real model files: the reader sees what gguf-py sees. The default model
// (SmolLM2-135M-Instruct, Q4_1) and Gemma 3 270M (Q4_K_M: Q5_0, Q4_K, Q6_K,
// Q8_0), each skipped when it has not been fetched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "dequant_fixture.h"
#include "default_model.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {
namespace {

std::map<GgmlType, int> count_by_type(const GgufFile& file) {
  std::map<GgmlType, int> counts;
  for (const GgufTensorInfo& t : file.tensors()) ++counts[t.type];
  return counts;
}

// Dequantizes each sampled tensor whole and compares the samples bit for bit.
void expect_samples_match(const GgufFile& file, const test::ModelSamples& fixture) {
  ASSERT_FALSE(fixture.samples.empty())
      << "the fixture has no samples of " << (fixture.file.empty() ? "this model" : fixture.file)
      << ": run make_dequant_fixture.py with the model present";
  std::string last_tensor;
  std::vector<float> values;
  for (const test::ModelSample& sample : fixture.samples) {
    const GgufTensorInfo* tensor = file.find_tensor(sample.tensor);
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
  const std::map<GgmlType, int> counts = count_by_type(*file_);
  EXPECT_EQ(counts.at(GgmlType::kQ4_1), 210);
  EXPECT_EQ(counts.at(GgmlType::kF32), 61);
  EXPECT_EQ(counts.at(GgmlType::kQ8_0), 1);
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
  expect_samples_match(*file_, test::dequant_fixture().model);
}

// Gemma 3 270M as scripts/fetch-model.sh gemma3-270m caches it:
// $KVFRAME_MODELS/<file>, else ~/.cache/kvframe/models/<file>.
std::filesystem::path gemma3_path() {
  const std::string file = "gemma-3-270m-q4_k_m.gguf";
  if (const char* models = std::getenv("KVFRAME_MODELS"); models && *models) {
    return std::filesystem::path(models) / file;
  }
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home ? home : "") / ".cache" / "kvframe" / "models" / file;
}

class GgufGemma3Model : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::filesystem::path path = gemma3_path();
    if (!std::filesystem::exists(path)) {
      GTEST_SKIP() << "no Gemma 3 270M at " << path << ": run scripts/fetch-model.sh gemma3-270m";
    }
    const test::ModelSamples& fixture = test::dequant_fixture().gemma3_model;
    if (fixture.size != 0) {
      ASSERT_EQ(static_cast<int64_t>(std::filesystem::file_size(path)), fixture.size)
          << path << " is not the " << fixture.file << " the fixture's samples came from";
    }
    Result<GgufFile> opened = GgufFile::open(path.string());
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    file_ = std::make_unique<GgufFile>(std::move(opened).value());
  }
  std::unique_ptr<GgufFile> file_;
};

TEST_F(GgufGemma3Model, HasTheExpectedTensorTypes) {
  ASSERT_EQ(file_->tensors().size(), 236u);
  const std::map<GgmlType, int> counts = count_by_type(*file_);
  EXPECT_EQ(counts.at(GgmlType::kQ5_0), 81);
  EXPECT_EQ(counts.at(GgmlType::kQ4_K), 27);
  EXPECT_EQ(counts.at(GgmlType::kQ6_K), 9);
  EXPECT_EQ(counts.at(GgmlType::kQ8_0), 10);
  EXPECT_EQ(counts.at(GgmlType::kF32), 109);
}

// Every tensor but the 167M-element embedding, whole: supported, finite.
TEST_F(GgufGemma3Model, EveryLayerTensorDequantizes) {
  std::vector<float> values;
  for (const GgufTensorInfo& t : file_->tensors()) {
    if (t.name == "token_embd.weight") continue;
    SCOPED_TRACE(t.name);
    values.resize(static_cast<std::size_t>(t.n_elements()));
    const Status status = dequantize_tensor(t, values.data());
    ASSERT_TRUE(status.ok()) << status.error().to_string();
    for (float v : values) ASSERT_TRUE(std::isfinite(v));
  }
}

TEST_F(GgufGemma3Model, DequantizesLikeGgufPy) {
  expect_samples_match(*file_, test::dequant_fixture().gemma3_model);
}

}  // namespace
}  // namespace kvframe::runtime
