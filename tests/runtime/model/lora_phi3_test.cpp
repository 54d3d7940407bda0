// LoRA adapters on phi3's fused tensors (test::phi3_shape()): a file as
// llama.cpp's convert_lora_to_gguf.py writes one (attn_qkv and ffn_up, which
// holds gate|up, beside attn_output and ffn_down) applied on the fly or
// merged equals the naive decoder on the file whose weights were merged
// W + alpha / rank · B A, on the libtorch and step-kernel paths; an adapter
// kvframe makes for phi3 (training's) is written in that layout; bad
// adapters are typed errors naming the tensor.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gguf_writer.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "naive_reference.h"
#include "tiny_runtime.h"

// A namespace of its own: the unity build puts lora_test.cpp's helpers in the same unit.
namespace kvframe::runtime::phi3_lora {
namespace {

const std::vector<int32_t> kPrompt = {257, 72, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 258, 10, 33, 0, 255, 128};
constexpr double kLogitTolerance = 2e-4;  // fp32 against the double-precision reference, as phi3_test.cpp
constexpr int64_t kRank = 4;
constexpr float kAlpha = 8;

GgufFile parsed(const std::vector<uint8_t>& bytes) {
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  return std::move(file).value();
}

// An F32 tensor's values, torch order [out, in].
at::Tensor values_of(const GgufTensorInfo& t) {
  return at::from_blob(const_cast<uint8_t*>(t.data), {t.dims[1], t.dims[0]}, at::kFloat).clone();
}

test::GgufWriter adapter_header() {
  test::GgufWriter w;
  w.add_string("general.architecture", "phi3");
  w.add_string("general.type", "adapter");
  w.add_string("adapter.type", "lora");
  w.add_f32("adapter.lora.alpha", kAlpha);
  return w;
}

// A phi3 adapter as convert_lora_to_gguf.py writes one from a PEFT adapter
// of qkv_proj, o_proj, gate_up_proj and down_proj: per layer A [in, rank]
// and B [rank, out] (ggml order) of the model's own tensors, rows of B in
// the file's order.
std::vector<uint8_t> converted_adapter(const GgufFile& model) {
  test::GgufWriter w = adapter_header();
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  for (const GgufTensorInfo& t : model.tensors()) {
    const std::string& name = t.name;
    const bool adapted = name.rfind("blk.", 0) == 0 &&
                         (name.find(".attn_qkv.weight") != std::string::npos ||
                          name.find(".attn_output.weight") != std::string::npos ||
                          name.find(".ffn_up.weight") != std::string::npos ||
                          name.find(".ffn_down.weight") != std::string::npos);
    if (!adapted) continue;
    const int64_t in = t.dims[0], out = t.dims[1];
    for (const auto& [suffix, dims] : {std::pair{".lora_a", std::vector<int64_t>{in, kRank}},
                                       std::pair{".lora_b", std::vector<int64_t>{kRank, out}}}) {
      std::vector<float> v(static_cast<size_t>(dims[0] * dims[1]));
      for (float& x : v) x = normal(rng);
      w.add_tensor_f32(name + suffix, dims, v);
    }
  }
  return w.bytes();
}

// The model file with every adapted tensor replaced by W + alpha / rank · B A
// in the file's own row order: what llama.cpp's adapter computes.
std::vector<uint8_t> merged_model(const GgufFile& model, const GgufFile& adapter) {
  test::GgufWriter w;
  test::copy_scalar_metadata(model, w);
  for (const GgufTensorInfo& t : model.tensors()) {
    const GgufTensorInfo* a = adapter.find_tensor(t.name + ".lora_a");
    const GgufTensorInfo* b = adapter.find_tensor(t.name + ".lora_b");
    if (!a) {
      w.add_tensor(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.nbytes));
      continue;
    }
    const at::Tensor merged =
        (values_of(t) + kAlpha / static_cast<double>(kRank) * at::matmul(values_of(*b), values_of(*a))).contiguous();
    w.add_tensor_f32(t.name, t.dims, std::vector<float>(merged.data_ptr<float>(), merged.data_ptr<float>() + merged.numel()));
  }
  return w.bytes();
}

// The prompt's logits, a prefill and a token a step, against the reference.
void expect_matches(const Model& model, const std::vector<std::vector<double>>& reference) {
  const double worst = test::largest_gap_to(model, kPrompt, reference);
  EXPECT_LT(worst, kLogitTolerance) << "largest |logit - reference| = " << worst;
}

ModelParams fp32_params(bool step_kernels) {
  ModelParams params;
  params.dtype = "fp32";
  params.step_kernels = step_kernels;
  params.int8_activations = false;  // the reference's fp32 arithmetic
  return params;
}

TEST(Phi3Lora, ConvertedAdapterEqualsMergedWeightsOnBothPaths) {
  const std::vector<uint8_t> model_bytes = test::tiny_model_bytes(test::phi3_shape());
  const GgufFile model_file = parsed(model_bytes);
  const std::vector<uint8_t> adapter_bytes = converted_adapter(model_file);
  const GgufFile adapter_file = parsed(adapter_bytes);
  const std::vector<uint8_t> merged_bytes = merged_model(model_file, adapter_file);
  const auto reference = test::naive_logits(parsed(merged_bytes), kPrompt);
  // The adapter must move the logits far past the tolerance (a B whose
  // Q/K rows were read in the wrong order would then show).
  EXPECT_GT(test::largest_difference(test::naive_logits(model_file, kPrompt), reference), 100 * kLogitTolerance);

  test::TempFile saved;
  {
    FILE* out = std::fopen(saved.path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(std::fwrite(adapter_bytes.data(), 1, adapter_bytes.size(), out), adapter_bytes.size());
    std::fclose(out);
  }
  for (bool step_kernels : {false, true}) {
    SCOPED_TRACE(step_kernels ? "step kernels" : "libtorch");
    auto model = Model::load(model_file, fp32_params(step_kernels));
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    auto adapter = LoraAdapter::parse(adapter_file, (*model)->config());
    ASSERT_TRUE(adapter.ok()) << adapter.error().to_string();
    EXPECT_EQ((*adapter)->params().targets,
              (std::vector<std::string>{"attn_qkv", "attn_output", "ffn_up", "ffn_down"}));
    ASSERT_TRUE((*model)->set_adapter(*adapter).ok());
    {
      SCOPED_TRACE("applied on the fly");
      expect_matches(**model, reference);
    }
    ModelParams merging = fp32_params(step_kernels);
    merging.lora = saved.path;
    merging.lora_merge = true;
    auto merged = Model::load(model_file, merging);
    ASSERT_TRUE(merged.ok()) << merged.error().to_string();
    SCOPED_TRACE("merged at load");
    expect_matches(**merged, reference);
  }
}

// What kvframe makes for phi3 (kvframe-finetune's adapters) targets the
// fused tensors and is written as llama.cpp reads them: the model with the
// written file merged in the file's row order equals the model running the
// adapter, and reading the file back gives the same adapter.
TEST(Phi3Lora, MadeAdaptersAreWrittenInTheFilesLayout) {
  const std::vector<uint8_t> model_bytes = test::tiny_model_bytes(test::phi3_shape());
  const GgufFile model_file = parsed(model_bytes);
  auto model = Model::load(model_file, fp32_params(true)).value();
  EXPECT_EQ(lora_target_names(model->config()),
            (std::vector<std::string>{"attn_qkv", "attn_output", "ffn_up", "ffn_down"}));
  LoraParams params;
  params.rank = kRank;
  params.alpha = kAlpha;
  params.scope = LoraScope::kAll;
  auto adapter = LoraAdapter::create(model->config(), params, at::kCPU, 3).value();
  EXPECT_EQ(adapter->params().targets, lora_target_names(model->config()));
  {
    at::NoGradGuard no_grad;
    for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.1);
  }
  const std::vector<uint8_t> written = adapter->bytes(GgmlType::kF32);
  const GgufFile written_file = parsed(written);
  const GgufTensorInfo* qkv_b = written_file.find_tensor("blk.1.attn_qkv.weight.lora_b");
  const GgufTensorInfo* up_b = written_file.find_tensor("blk.0.ffn_up.weight.lora_b");
  ASSERT_TRUE(qkv_b && up_b);
  const ModelConfig& c = model->config();
  EXPECT_EQ(qkv_b->dims, (std::vector<int64_t>{kRank, (c.n_head + 2 * c.n_head_kv) * c.head_dim}));
  EXPECT_EQ(up_b->dims, (std::vector<int64_t>{kRank, 2 * c.n_ff}));
  EXPECT_EQ(written_file.find_tensor("blk.0.attn_q.weight.lora_a"), nullptr);

  ASSERT_TRUE(model->set_adapter(adapter).ok());
  expect_matches(*model, test::naive_logits(parsed(merged_model(model_file, written_file)), kPrompt));
  auto again = LoraAdapter::parse(written_file, c);
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ((*again)->fingerprint(), adapter->fingerprint());

  // Training: the fused pairs take gradients through the forward pass.
  for (const at::Tensor& p : adapter->parameters()) p.requires_grad_(true);
  const KvCache context = model->context_kv({{257, 72, 101}, {{108, 108, 111}}, {}, {}}, AttentionMask::kBlock).value();
  model->forward_over({32, 119, 111}, context, PromptPart::kQuery, 3).value().logsumexp(-1).sum().backward();
  for (size_t i = 0; i < adapter->parameters().size(); ++i) {
    const at::Tensor& grad = adapter->parameters()[i].grad();
    EXPECT_TRUE(grad.defined() && grad.abs().sum().item<double>() > 0) << adapter->parameter_names()[i];
  }
}

void expect_refused(const GgufFile& model_file, const test::GgufWriter& adapter, ErrorCode code,
                    const std::string& named) {
  auto model = Model::load(model_file).value();
  const std::vector<uint8_t> bytes = adapter.bytes();
  auto loaded = LoraAdapter::parse(parsed(bytes), model->config());
  ASSERT_FALSE(loaded.ok()) << named;
  EXPECT_EQ(loaded.error().code, code) << loaded.error().to_string();
  EXPECT_NE(loaded.error().message.find(named), std::string::npos) << loaded.error().to_string();
}

TEST(Phi3Lora, BadAdaptersAreTypedErrorsNamingTheTensor) {
  const test::TinyModelSpec spec = test::phi3_shape();
  const std::vector<uint8_t> model_bytes = test::tiny_model_bytes(spec);
  const GgufFile model_file = parsed(model_bytes);
  const int64_t E = spec.n_embd, qkv_rows = (spec.n_head + 2 * spec.n_head_kv) * (E / spec.n_head);
  auto pair = [&](const std::string& tensor, int64_t out) {
    test::GgufWriter w = adapter_header();
    w.add_tensor_f32(tensor + ".lora_a", {E, kRank}, std::vector<float>(static_cast<size_t>(E * kRank), 0.1f));
    w.add_tensor_f32(tensor + ".lora_b", {kRank, out}, std::vector<float>(static_cast<size_t>(kRank * out), 0.1f));
    return w;
  };
  // B of Q|K|V with Q's rows only; of gate|up with up's only.
  expect_refused(model_file, pair("blk.0.attn_qkv.weight", E), ErrorCode::kShapeMismatch,
                 "blk.0.attn_qkv.weight.lora_b");
  expect_refused(model_file, pair("blk.1.ffn_up.weight", spec.n_ff), ErrorCode::kShapeMismatch,
                 "blk.1.ffn_up.weight.lora_b");
  // A projection the phi3 file does not have apart.
  expect_refused(model_file, pair("blk.0.attn_q.weight", E), ErrorCode::kInvalidArgument,
                 "blk.0.attn_q.weight.lora_a");
  ASSERT_TRUE(LoraAdapter::parse(parsed(pair("blk.0.attn_qkv.weight", qkv_rows).bytes()),
                                 Model::load(model_file).value()->config())
                  .ok());

  // Made for phi3 with the parts' names: refused, naming the fused ones.
  LoraParams params;
  params.targets = {"attn_q", "attn_k", "attn_v"};
  auto made = LoraAdapter::create(Model::load(model_file).value()->config(), params);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(made.error().message.find("attn_qkv"), std::string::npos) << made.error().message;
}

}  // namespace
}  // namespace kvframe::runtime::phi3_lora
