#include "tiny_runtime.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <random>

namespace kvframe::test {

std::unique_ptr<runtime::Model> load_tiny_model(const TinyModelSpec& spec, runtime::ModelParams params) {
  const std::vector<uint8_t> bytes = tiny_model_bytes(spec);
  auto file = runtime::GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  if (params.dtype.empty()) params.dtype = "fp32";  // the reference, unless a test asks for another
  auto model = runtime::Model::load(*file, params);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().to_string());
  return model.ok() ? std::move(model).value() : nullptr;
}

std::vector<TinyModelSpec> tiny_shapes() {
  TinyModelSpec qwen2, qwen3, mha;
  qwen2.arch = "qwen2", qwen2.qkv_bias = true, qwen2.tied = false, qwen2.rope_base = 1000000.0f;
  qwen3.arch = "qwen3", qwen3.rope_base = 1000000.0f;
  mha.n_head_kv = mha.n_head;
  return {TinyModelSpec{}, qwen2, qwen3, mha};
}

TinyModelSpec windowed_shape() {
  TinyModelSpec gemma3;
  gemma3.arch = "gemma3", gemma3.n_head_kv = 1, gemma3.rope_base = 1000000.0f, gemma3.sliding_window = 5;
  return gemma3;
}

std::string describe(const TinyModelSpec& spec) {
  return spec.arch + ", " + std::to_string(spec.n_head) + " heads over " + std::to_string(spec.n_head_kv) + " kv heads";
}

double largest_gap_to(const runtime::Model& model, const std::vector<int32_t>& prompt,
                      const std::vector<std::vector<double>>& reference) {
  const auto n = static_cast<int64_t>(prompt.size());
  runtime::KvCache whole = *model.new_cache(n), stepwise = *model.new_cache(n);
  const at::Tensor all = *model.forward(token_ids(prompt), whole, true);
  double worst = 0;
  for (int64_t t = 0; t < n; ++t) {
    auto step = model.forward(token_ids({prompt[static_cast<size_t>(t)]}), stepwise);
    EXPECT_TRUE(step.ok()) << step.error().to_string();
    const at::Tensor want = at::tensor(reference[static_cast<size_t>(t)], at::kDouble).to(at::kFloat);
    for (const at::Tensor& row : {all[t], (*step)[0]}) worst = std::max(worst, (row - want).abs().max().item<double>());
  }
  return worst;
}

TempFile::TempFile() {
  static std::atomic<int> counter{0};
  path = ::testing::TempDir() + "kvframe_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".gguf";
}

TempFile::~TempFile() { std::remove(path.c_str()); }

at::Tensor token_ids(const std::vector<int32_t>& tokens) {
  return at::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), at::kLong);
}

std::vector<int32_t> random_tokens(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(kTinyVocab) - 1);
  std::vector<int32_t> tokens(static_cast<size_t>(n));
  for (int32_t& t : tokens) t = id(rng);
  return tokens;
}

std::vector<std::vector<int32_t>> random_rows(const std::vector<int64_t>& lengths, uint32_t seed) {
  std::vector<std::vector<int32_t>> rows;
  for (int64_t n : lengths) rows.push_back(random_tokens(n, seed++));
  return rows;
}

}  // namespace kvframe::test
