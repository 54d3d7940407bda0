// runtime::Model on tiny random-weight GGUF models: agreement with the naive
// reference decoder, cache consistency, and typed errors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>

#include "gguf_writer.h"
#include "kvframe/runtime/model.h"
#include "naive_reference.h"
#include "tiny_model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TinyModelSpec;

GgufFile tiny_file(const TinyModelSpec& spec) {
  const std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  return std::move(file).value();
}

// fp32, the reference the tolerances below are for (the library's default
// dtype follows the CPU).
std::unique_ptr<Model> load(const GgufFile& file) {
  ModelParams params;
  params.dtype = "fp32";
  auto model = Model::load(file, params);
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().to_string());
  return std::move(model).value();
}

const std::vector<int> kPrompt = {257, 72, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 258, 10, 33, 0, 255, 128};

// fp32 model vs double-precision reference: tolerance for accumulated rounding
// over 2 layers with logits of magnitude ~1-10.
constexpr double kLogitTolerance = 2e-4;

void expect_matches_reference(const TinyModelSpec& spec) {
  const GgufFile file = tiny_file(spec);
  auto model = load(file);
  KvCache cache = *model->new_cache(64);
  auto logits = model->forward(test::token_ids(kPrompt), cache, /*all_logits=*/true);
  ASSERT_TRUE(logits.ok()) << logits.error().to_string();
  const auto reference = test::naive_logits(file, kPrompt);
  ASSERT_EQ(logits->size(0), static_cast<int64_t>(kPrompt.size()));
  double worst = 0;
  for (size_t t = 0; t < kPrompt.size(); ++t) {
    const at::Tensor row = (*logits)[static_cast<int64_t>(t)];
    for (int64_t v = 0; v < row.size(0); ++v) {
      worst = std::max(worst, std::abs(row[v].item<double>() - reference[t][v]));
    }
  }
  EXPECT_LT(worst, kLogitTolerance) << "largest |logit - reference| = " << worst;
}

TEST(ModelReference, LlamaGqaTiedEmbeddingsMatchesNaiveDecoder) { expect_matches_reference({}); }

TEST(ModelReference, Qwen2BiasesAndSeparateOutputMatchNaiveDecoder) {
  TinyModelSpec spec;
  spec.arch = "qwen2";
  spec.qkv_bias = true;
  spec.tied = false;
  spec.rope_base = 1000000.0f;
  expect_matches_reference(spec);
}

TEST(ModelReference, Llama3RopeFactorsMatchNaiveDecoder) {
  TinyModelSpec spec;
  spec.rope_base = 500000.0f;
  for (int i = 0; i < 8; ++i) spec.rope_freq_factors.push_back(1.0f + static_cast<float>(i));
  expect_matches_reference(spec);
}

TEST(ModelReference, MultiHeadAttentionWithF16WeightsMatchesNaiveDecoder) {
  TinyModelSpec spec;
  spec.n_head_kv = spec.n_head;
  spec.weight_type = GgmlType::kF16;
  expect_matches_reference(spec);
}

TEST(ModelReference, Qwen3QkNormsMatchNaiveDecoder) {
  TinyModelSpec spec;
  spec.arch = "qwen3";
  spec.tied = false;
  spec.rope_base = 1000000.0f;
  expect_matches_reference(spec);
}

// Gemma 3 at a window shorter than the prompt: layer 0 local (window, its
// own RoPE base), layer 1 global.
TinyModelSpec gemma3_spec() {
  TinyModelSpec spec;
  spec.arch = "gemma3";
  spec.n_head_kv = 1;
  spec.rope_base = 1000000.0f;
  spec.sliding_window = 5;
  return spec;
}

TEST(ModelReference, Gemma3WindowsNormsAndGegluMatchNaiveDecoder) {
  expect_matches_reference(gemma3_spec());
  TinyModelSpec all_global = gemma3_spec();
  all_global.sliding_window = 0;
  expect_matches_reference(all_global);
}

TEST(ModelCache, Gemma3StepsAndChunksPastTheWindowEqualOnePrefill) {
  for (bool step_kernels : {false, true}) {
    SCOPED_TRACE(step_kernels ? "step kernels" : "libtorch");
    ModelParams params;
    params.step_kernels = step_kernels;
    auto model = test::load_tiny_model(gemma3_spec(), params);
    ASSERT_TRUE(model);
    KvCache whole = *model->new_cache(32);
    const at::Tensor all = *model->forward(test::token_ids(kPrompt), whole, true);
    KvCache stepwise = *model->new_cache(32);
    for (size_t t = 0; t < kPrompt.size(); t += 3) {  // runs of 3, each within the step path's reach
      const std::vector<int> run(kPrompt.begin() + static_cast<int64_t>(t),
                                 kPrompt.begin() + static_cast<int64_t>(std::min(t + 3, kPrompt.size())));
      auto logits = model->forward(test::token_ids(run), stepwise, true);
      ASSERT_TRUE(logits.ok());
      EXPECT_TRUE(at::allclose(*logits, all.narrow(0, static_cast<int64_t>(t), logits->size(0)), 1e-4, 1e-4))
          << "tokens from " << t;
    }
  }
}

// A padded cache's entries are not positions, which windows count (branches
// and training refuse one too: their tests).
TEST(ModelErrors, Gemma3WindowsRefuseAPaddedCache) {
  auto model = test::load_tiny_model(gemma3_spec());
  ASSERT_TRUE(model);
  KvCache cache = *model->new_cache(16);
  cache.padding = at::zeros({16}, at::kBool);  // as the slack layout's assembled KV
  auto padded = model->forward(test::token_ids({1, 2}), cache);
  ASSERT_FALSE(padded.ok());
  EXPECT_EQ(padded.error().code, ErrorCode::kUnsupportedArch);
  EXPECT_EQ(cache.length, 0);
}

TEST(ModelCache, TokenByTokenDecodeEqualsOnePrefill) {
  const GgufFile file = tiny_file({});
  auto model = load(file);
  KvCache whole = *model->new_cache(32);
  const at::Tensor all = *model->forward(test::token_ids(kPrompt), whole, true);
  KvCache stepwise = *model->new_cache(32);
  for (size_t t = 0; t < kPrompt.size(); ++t) {
    auto step = model->forward(test::token_ids({kPrompt[t]}), stepwise);
    ASSERT_TRUE(step.ok());
    EXPECT_TRUE(at::allclose((*step)[0], all[static_cast<int64_t>(t)], 1e-5, 1e-5)) << "position " << t;
  }
  EXPECT_EQ(stepwise.length, whole.length);
}

TEST(ModelCache, ChunkedPrefillEqualsOnePrefillAndLastLogitsOnly) {
  const GgufFile file = tiny_file({});
  auto model = load(file);
  KvCache whole = *model->new_cache(32);
  const at::Tensor all = *model->forward(test::token_ids(kPrompt), whole, true);
  KvCache chunked = *model->new_cache(32);
  const std::vector<int> first(kPrompt.begin(), kPrompt.begin() + 7), rest(kPrompt.begin() + 7, kPrompt.end());
  ASSERT_TRUE(model->forward(test::token_ids(first), chunked).ok());
  const at::Tensor last = *model->forward(test::token_ids(rest), chunked);
  ASSERT_EQ(last.size(0), 1);
  EXPECT_TRUE(at::allclose(last[0], all[-1], 1e-5, 1e-5));
}

TEST(ModelErrors, ContextFullAndTokenOutOfRange) {
  const GgufFile file = tiny_file({});
  auto model = load(file);
  KvCache cache = *model->new_cache(4);
  auto too_long = model->forward(test::token_ids({1, 2, 3, 4, 5}), cache);
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().code, ErrorCode::kContextFull);
  EXPECT_EQ(cache.length, 0);
  auto bad_token = model->forward(test::token_ids({1, static_cast<int>(test::kTinyVocab)}), cache);
  ASSERT_FALSE(bad_token.ok());
  EXPECT_EQ(bad_token.error().code, ErrorCode::kInvalidArgument);
}

TEST(ModelErrors, UnsupportedArchitectureIsNamed) {
  std::vector<uint8_t> bytes;
  test::GgufWriter w;
  w.add_string("general.architecture", "mamba");
  bytes = w.bytes();
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  auto model = Model::load(*file);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::kUnsupportedArch);
  EXPECT_NE(model.error().message.find("mamba"), std::string::npos);
}

// A Gemma 3 file whose layer 1 lacks its Q norm (the name changed in place):
// kMissingTensor naming it, not a model run without it.
TEST(ModelErrors, Gemma3MissingNormIsNamed) {
  std::vector<uint8_t> bytes = test::tiny_model_bytes(gemma3_spec());
  const std::string from = "blk.1.attn_q_norm", to = "blk.1.attn_q_nrom";
  const auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  ASSERT_NE(at, bytes.end());
  std::copy(to.begin(), to.end(), at);
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  auto model = Model::load(*file);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::kMissingTensor);
  EXPECT_NE(model.error().message.find("blk.1.attn_q_norm.weight"), std::string::npos) << model.error().message;
}

TEST(ModelErrors, MissingKeyIsNamed) {
  test::GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  const auto bytes = w.bytes();
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  auto model = Model::load(*file);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::kMissingKey);
  EXPECT_NE(model.error().message.find("llama."), std::string::npos) << model.error().message;
}

TEST(ModelErrors, WrongShapeNamesTheTensor) {
  TinyModelSpec spec;
  spec.n_ff = 96;
  std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  // Same tensors, but metadata claiming a wider feed-forward layer.
  test::GgufWriter w;
  test::copy_scalar_metadata(*file, w, "llama.feed_forward_length");
  w.add_u32("llama.feed_forward_length", 128);
  for (const GgufTensorInfo& t : file->tensors()) {
    w.add_tensor(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.nbytes));
  }
  const auto rewritten = w.bytes();
  auto bad = GgufFile::parse(rewritten.data(), rewritten.size());
  ASSERT_TRUE(bad.ok());
  auto model = Model::load(*bad);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::kShapeMismatch);
  EXPECT_NE(model.error().message.find("ffn_"), std::string::npos) << model.error().message;
}

TEST(ModelRandomWeights, RealShapeConfigRunsAndIsSeeded) {
  const GgufFile file = tiny_file({});
  ModelConfig config = read_model_config(file).value();
  config.n_layer = 3;
  auto a = Model::with_random_weights(config, {}, 5);
  auto b = Model::with_random_weights(config, {}, 5);
  ASSERT_TRUE(a.ok() && b.ok());
  KvCache ca = *(*a)->new_cache(8), cb = *(*b)->new_cache(8);
  const at::Tensor la = *(*a)->forward(test::token_ids({1, 2, 3}), ca), lb = *(*b)->forward(test::token_ids({1, 2, 3}), cb);
  EXPECT_TRUE(at::equal(la, lb));
  EXPECT_TRUE(la.isfinite().all().item<bool>());
  config.n_head_kv = 3;  // does not divide 4 heads
  EXPECT_FALSE(Model::with_random_weights(config).ok());
}

TEST(ModelDtype, Bf16FollowsFp32WithinBf16PrecisionAndBadNamesAreErrors) {
  const GgufFile file = tiny_file({});
  auto fp32 = load(file);
  ModelParams params;
  params.dtype = "bf16";
  auto bf16 = Model::load(file, params);
  ASSERT_TRUE(bf16.ok()) << bf16.error().to_string();
  EXPECT_EQ((*bf16)->dtype(), at::kBFloat16);
  KvCache a = *fp32->new_cache(32), b = *(*bf16)->new_cache(32);
  const at::Tensor la = *fp32->forward(test::token_ids(kPrompt), a, true), lb = *(*bf16)->forward(test::token_ids(kPrompt), b, true);
  EXPECT_EQ(lb.scalar_type(), at::kFloat);  // logits are fp32 whatever the compute dtype
  // bf16 keeps 8 significant bits: relative error ~0.4% per rounding, over 2 layers.
  const double worst = (la - lb).abs().max().item<double>(), scale = la.abs().max().item<double>();
  EXPECT_LT(worst, 0.05 * scale) << worst << " vs logits up to " << scale;
  params.dtype = "int3";
  auto bad = Model::load(file, params);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

TEST(ModelErrors, CudaOnACpuBuildIsDeviceUnavailable) {
  if (at::hasCUDA()) GTEST_SKIP() << "this libtorch has CUDA";
  const GgufFile file = tiny_file({});
  ModelParams params;
  params.device = "cuda";
  auto model = Model::load(file, params);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, ErrorCode::kDeviceUnavailable);
}

}  // namespace
}  // namespace kvframe::runtime
