// The CPU's weights as stored (runtime/model/cpu_step.h) against the dense
// libtorch path they stand in for (ModelParams::step_kernels = false): a
// model prefilling (tiles) and stepping (kernels) from the file's blocks
// against the same model with dense weights — decoding steps, forced runs,
// padded caches, adapters, every tiny shape and weight type. The kernels
// themselves: quant_matrix_test.cpp.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <vector>

#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TinyModelSpec;

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return (got - want).abs().max().item<double>() / (want.abs().max().item<double>() + 1e-6);
}

// Prefill, then steps of these sizes (each within kStepTokens), all logits,
// on the kernel path and the libtorch path; every step's logits compared.
void expect_steps_match(const Model& kernels, const Model& reference, const std::vector<int64_t>& steps,
                        double tolerance, bool padded = false) {
  const std::vector<int32_t> prompt = test::random_tokens(40, 11);
  KvCache a = *kernels.new_cache(128), b = *reference.new_cache(128);
  ASSERT_TRUE(kernels.forward(test::token_ids(prompt), a).ok());
  ASSERT_TRUE(reference.forward(test::token_ids(prompt), b).ok());
  if (padded) {  // as an assembled cache: some entries no token may see
    for (KvCache* c : {&a, &b}) {
      c->padding = at::zeros({c->capacity}, at::kBool);
      c->padding.narrow(0, 5, 7).fill_(true);
    }
  }
  uint32_t seed = 20;
  for (int64_t n : steps) {
    const std::vector<int32_t> run = test::random_tokens(n, seed++);
    auto got = kernels.forward(test::token_ids(run), a, /*all_logits=*/true);
    auto want = reference.forward(test::token_ids(run), b, /*all_logits=*/true);
    ASSERT_TRUE(got.ok() && want.ok());
    ASSERT_EQ(got->sizes(), want->sizes());
    EXPECT_LT(relative_error(*got, *want), tolerance) << "a step of " << n << " tokens";
    EXPECT_EQ(a.length, b.length);
    EXPECT_EQ(a.next_position, b.next_position);
  }
  // The keys and values the steps wrote are the ones libtorch writes.
  for (size_t l = 0; l < a.k.size(); ++l) {
    EXPECT_LT(relative_error(a.k[l].narrow(1, 40, a.length - 40).to(at::kFloat), b.k[l].narrow(1, 40, b.length - 40).to(at::kFloat)), tolerance);
    EXPECT_LT(relative_error(a.v[l].narrow(1, 40, a.length - 40).to(at::kFloat), b.v[l].narrow(1, 40, b.length - 40).to(at::kFloat)), tolerance);
  }
}

// The stored path takes fp32 activations unless `int8`: then only the
// rounding of activations to int8 (ModelParams::int8_activations) parts it
// from the reference.
std::pair<std::unique_ptr<Model>, std::unique_ptr<Model>> both_paths(const TinyModelSpec& spec, const std::string& dtype = "fp32",
                                                                     bool int8 = false) {
  ModelParams kernels, reference;
  kernels.dtype = reference.dtype = dtype;
  kernels.int8_activations = int8;
  reference.step_kernels = false;
  return {test::load_tiny_model(spec, kernels), test::load_tiny_model(spec, reference)};
}

TEST(CpuStep, StepsMatchTheForwardPassOnEveryShapeAndWeightType) {
  for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    for (TinyModelSpec spec : test::tiny_shapes()) {
      spec.weight_type = type;
      SCOPED_TRACE(test::describe(spec) + ", " + ggml_type_name(type));
      auto [kernels, reference] = both_paths(spec);
      ASSERT_TRUE(kernels && reference);
      expect_steps_match(*kernels, *reference, {1, 1, 5, 16, 1}, 1e-4);  // fp32: summation order only
    }
  }
}

TEST(CpuStep, Int8ActivationsStepNearTheForwardPass) {
  // The 32-value block types take int8 activations with the AVX2 kernel
  // (a CPU without AVX-512); elsewhere fp32 ones, so the bound holds anywhere.
  for (GgmlType type : {GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1}) {
    for (TinyModelSpec spec : test::tiny_shapes()) {
      spec.weight_type = type;
      SCOPED_TRACE(test::describe(spec) + ", " + ggml_type_name(type));
      auto [kernels, reference] = both_paths(spec, "fp32", /*int8=*/true);
      ASSERT_TRUE(kernels && reference);
      // Each activation is off by up to 1/254 of its 32 values' largest;
      // through two layers of random weights the keys, values and logits
      // land within 5% of the largest (llama.cpp rounds these types alike).
      expect_steps_match(*kernels, *reference, {1, 1, 5, 16, 1}, 5e-2);
    }
  }
}

TEST(CpuStep, RunsOfSeveralTokensKeepFp32Activations) {
  // Only decoding steps round: a prompt's tail run through the steps writes
  // the keys and values a long pass would, at fp32's tolerance.
  TinyModelSpec spec;
  spec.weight_type = GgmlType::kQ4_1;
  auto [kernels, reference] = both_paths(spec, "fp32", /*int8=*/true);
  expect_steps_match(*kernels, *reference, {5, 16, 2}, 1e-4);
}

TEST(CpuStep, Gemma3WindowsAndNormsStepAsTheForwardPass) {
  TinyModelSpec spec;
  spec.arch = "gemma3";
  spec.n_head_kv = 1;
  spec.sliding_window = 7;
  for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0}) {
    spec.weight_type = type;
    SCOPED_TRACE(ggml_type_name(type));
    auto [kernels, reference] = both_paths(spec);
    ASSERT_TRUE(kernels && reference);
    expect_steps_match(*kernels, *reference, {1, 1, 5, 16, 1}, 1e-4);
  }
}

// The file's fused tensors read in place through partial rotary's row order,
// queries scaled by LongRoPE's attention factor, as the dense path does.
TEST(CpuStep, Phi3FusedPartialRotaryStepsAsTheForwardPass) {
  TinyModelSpec spec = test::phi3_shape();
  for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0, GgmlType::kQ4_0}) {
    spec.weight_type = type;
    SCOPED_TRACE(ggml_type_name(type));
    auto [kernels, reference] = both_paths(spec);
    ASSERT_TRUE(kernels && reference);
    expect_steps_match(*kernels, *reference, {1, 1, 5, 16, 1}, 1e-4);
  }
}

TEST(CpuStep, PaddedCacheEntriesStayUnseen) {
  auto [kernels, reference] = both_paths(TinyModelSpec{});
  expect_steps_match(*kernels, *reference, {1, 3, 1}, 1e-4, /*padded=*/true);
}

TEST(CpuStep, AdaptersApplyOnTheFlyAndMerged) {
  auto [kernels, reference] = both_paths(TinyModelSpec{});
  LoraParams params;
  params.rank = 4;
  params.alpha = 8;
  params.scope = LoraScope::kAll;
  auto adapter = LoraAdapter::create(kernels->config(), params, kernels->device(), 3).value();
  {
    at::NoGradGuard no_grad;
    for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.05);
  }
  ASSERT_TRUE(kernels->set_adapter(adapter).ok());
  ASSERT_TRUE(reference->set_adapter(adapter).ok());
  expect_steps_match(*kernels, *reference, {1, 4, 1}, 1e-4);

  // Merged at load: the kernels' blocks lack it, so the step adds it on the fly.
  const std::string path = ::testing::TempDir() + "kvframe_cpu_step_lora.gguf";
  ASSERT_TRUE(adapter->save(path, GgmlType::kF32).ok());
  const std::vector<uint8_t> bytes = test::tiny_model_bytes(TinyModelSpec{});
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ModelParams merged_params;
  merged_params.lora = path;
  merged_params.lora_merge = true;
  merged_params.dtype = "fp32";
  auto merged = Model::load(*file, merged_params);
  ASSERT_TRUE(merged.ok()) << merged.error().to_string();
  expect_steps_match(**merged, *reference, {1, 2}, 1e-4);
  std::remove(path.c_str());
}

TEST(CpuStep, Bf16StepsStayNearFp32) {
  // bf16: the cache holds bf16 and the weights were rounded to it; the
  // kernels keep activations in fp32, so they land nearer fp32 than libtorch's bf16 path.
  TinyModelSpec spec;
  spec.weight_type = GgmlType::kQ8_0;
  auto [kernels, bf16_reference] = both_paths(spec, "bf16");
  auto [unused, fp32_reference] = both_paths(spec, "fp32");
  expect_steps_match(*kernels, *fp32_reference, {1, 1, 4}, 2e-2);
  expect_steps_match(*bf16_reference, *fp32_reference, {1, 1, 4}, 2e-2);
}

TEST(CpuStep, RandomWeightModelsStepAlike) {
  ModelConfig config = test::load_tiny_model(TinyModelSpec{})->config();
  ModelParams kernels, reference;
  kernels.dtype = reference.dtype = "fp32";
  reference.step_kernels = false;
  auto a = Model::with_random_weights(config, kernels, 4), b = Model::with_random_weights(config, reference, 4);
  ASSERT_TRUE(a.ok() && b.ok());
  expect_steps_match(**a, **b, {1, 2, 1}, 1e-4);
}

TEST(CpuStep, BadTokenIdsAreTypedErrorsAndLeaveTheCacheAlone) {
  auto model = test::load_tiny_model(TinyModelSpec{});
  KvCache cache = *model->new_cache(8);
  auto bad = model->forward(at::tensor({int64_t{1}, int64_t{test::kTinyVocab}}), cache);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(cache.length, 0);
}

}  // namespace
}  // namespace kvframe::runtime
