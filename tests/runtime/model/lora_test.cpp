// LoRA adapters on tiny random-weight models: a fresh adapter is the base
// model, merged equals unmerged, files round-trip (and carry llama.cpp's
// layout), scopes apply where they say, and bad files are typed errors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kvframe/runtime_gguf/gguf_writer.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TempFile;
using test::TinyModelSpec;

constexpr double kTol = 1e-5;  // fp32, summation order only

at::Tensor logits_of(const Model& model, const std::vector<int32_t>& tokens, PromptPart part = PromptPart::kQuery) {
  KvCache cache = *model.new_cache(static_cast<int64_t>(tokens.size()));
  auto logits = model.forward(test::token_ids(tokens), cache, true, part);
  EXPECT_TRUE(logits.ok()) << logits.error().to_string();
  return *logits;
}

// An adapter that changes the model: B drawn at random.
std::shared_ptr<LoraAdapter> random_adapter(const Model& model, LoraScope scope, int64_t rank = 4,
                                            std::vector<std::string> targets = {}) {
  LoraParams params;
  params.rank = rank;
  params.alpha = 8;
  params.scope = scope;
  params.targets = std::move(targets);
  auto adapter = LoraAdapter::create(model.config(), params, model.device(), 3).value();
  at::NoGradGuard no_grad;
  for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.05);
  return adapter;
}

TEST(Lora, AFreshAdapterIsTheBaseModel) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(test::describe(spec));
    auto model = test::load_tiny_model(spec);
    const auto tokens = test::random_tokens(20, 1);
    const at::Tensor base = logits_of(*model, tokens);
    ASSERT_TRUE(model->set_adapter(LoraAdapter::create(model->config(), {}, model->device()).value()).ok());
    EXPECT_TRUE(at::allclose(logits_of(*model, tokens), base, kTol, kTol));
  }
}

TEST(Lora, MergedEqualsUnmergedAndSaveLoadIsIdentical) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(test::describe(spec));
    auto model = test::load_tiny_model(spec);
    const auto tokens = test::random_tokens(20, 2);
    const at::Tensor base = logits_of(*model, tokens);
    auto adapter = random_adapter(*model, LoraScope::kAll);
    ASSERT_TRUE(model->set_adapter(adapter).ok());
    const at::Tensor adapted = logits_of(*model, tokens);
    EXPECT_GT((adapted - base).abs().max().item<double>(), 1e-3) << "the adapter must change something";

    TempFile file;
    ASSERT_TRUE(adapter->save(file.path, GgmlType::kF32).ok());
    auto loaded = LoraAdapter::load(file.path, model->config());
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    ASSERT_EQ((*loaded)->parameter_names(), adapter->parameter_names());
    for (size_t i = 0; i < adapter->parameters().size(); ++i) {
      EXPECT_TRUE(at::equal((*loaded)->parameters()[i], adapter->parameters()[i])) << adapter->parameter_names()[i];
    }
    EXPECT_EQ((*loaded)->fingerprint(), adapter->fingerprint());
    EXPECT_EQ((*loaded)->params().scope, LoraScope::kAll);
    EXPECT_EQ((*loaded)->params().rank, 4);

    // Loaded with the model, merged and not.
    const std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
    const GgufFile gguf = GgufFile::parse(bytes.data(), bytes.size()).value();
    ModelParams params;
    params.dtype = "fp32";
    params.lora = file.path;
    auto unmerged = Model::load(gguf, params);
    ASSERT_TRUE(unmerged.ok()) << unmerged.error().to_string();
    EXPECT_TRUE(at::allclose(logits_of(**unmerged, tokens), adapted, kTol, kTol));
    params.lora_merge = true;
    auto merged = Model::load(gguf, params);
    ASSERT_TRUE(merged.ok()) << merged.error().to_string();
    EXPECT_EQ((*merged)->adapter(), nullptr);
    EXPECT_TRUE(at::allclose(logits_of(**merged, tokens), adapted, 1e-4, 1e-4))
        << "merged differs by " << (logits_of(**merged, tokens) - adapted).abs().max().item<double>();
    EXPECT_EQ((*merged)->context_fingerprint(), (*unmerged)->context_fingerprint());
  }
}

TEST(Lora, F16FilesKeepF16Precision) {
  auto model = test::load_tiny_model({});
  auto adapter = random_adapter(*model, LoraScope::kQuery, 8);
  TempFile file;
  ASSERT_TRUE(adapter->save(file.path).ok());  // F16 by default
  auto loaded = LoraAdapter::load(file.path, model->config()).value();
  for (size_t i = 0; i < adapter->parameters().size(); ++i) {
    EXPECT_TRUE(at::allclose(loaded->parameters()[i], adapter->parameters()[i], 1e-3, 1e-6));
  }
  EXPECT_EQ(loaded->params().scope, LoraScope::kQuery);
}

// llama.cpp's layout: A [in, rank] and B [rank, out] in ggml order, Q and K
// rows of B interleaved as 'llama' files store them.
TEST(Lora, FileLayoutIsLlamaCpps) {
  auto model = test::load_tiny_model({});
  auto adapter = random_adapter(*model, LoraScope::kAll, 4, {"attn_q", "ffn_down"});
  const std::vector<uint8_t> bytes = adapter->bytes(GgmlType::kF32);
  const GgufFile file = GgufFile::parse(bytes.data(), bytes.size()).value();
  EXPECT_EQ(file.get_string("general.type").value(), "adapter");
  EXPECT_EQ(file.get_string("adapter.type").value(), "lora");
  EXPECT_EQ(file.get_string("general.architecture").value(), "llama");
  EXPECT_FLOAT_EQ(static_cast<float>(file.get_float("adapter.lora.alpha").value()), 8.0f);
  const ModelConfig& c = model->config();
  const GgufTensorInfo* a = file.find_tensor("blk.1.attn_q.weight.lora_a");
  const GgufTensorInfo* b = file.find_tensor("blk.1.attn_q.weight.lora_b");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->dims, (std::vector<int64_t>{c.n_embd, 4}));
  EXPECT_EQ(b->dims, (std::vector<int64_t>{4, c.n_head * c.head_dim}));
  EXPECT_EQ(file.find_tensor("blk.0.attn_k.weight.lora_a"), nullptr);
  // Row r of the stored B is row unpermute(r) of ours: pairs interleaved per head.
  const at::Tensor ours = adapter->parameters()[1];  // blk.0.attn_q lora_b
  const GgufTensorInfo* stored_b = file.find_tensor("blk.0.attn_q.weight.lora_b");
  at::Tensor stored = at::from_blob(const_cast<uint8_t*>(stored_b->data), {c.n_head * c.head_dim, 4}, at::kFloat).clone();
  const int64_t half = c.head_dim / 2;
  EXPECT_TRUE(at::equal(stored[1], ours[half]));  // head 0: stored (0, 1) are pair (0, d/2)
  EXPECT_TRUE(at::equal(stored[2], ours[1]));
}

TEST(Lora, QueryScopeChangesTheQueryOnly) {
  auto model = test::load_tiny_model({});
  const auto tokens = test::random_tokens(16, 4);
  const at::Tensor base = logits_of(*model, tokens);
  const auto blocks = test::random_rows({5, 9}, 5);
  const BlockKv base_block = model->encode_blocks(blocks).value()[1];
  const uint64_t base_fingerprint = model->context_fingerprint();

  ASSERT_TRUE(model->set_adapter(random_adapter(*model, LoraScope::kQuery)).ok());
  EXPECT_TRUE(at::allclose(logits_of(*model, tokens, PromptPart::kContext), base, kTol, kTol));
  EXPECT_FALSE(at::allclose(logits_of(*model, tokens, PromptPart::kQuery), base, kTol, kTol));
  EXPECT_TRUE(at::equal(model->encode_blocks(blocks).value()[1].k, base_block.k));
  EXPECT_EQ(model->context_fingerprint(), base_fingerprint);  // block KV is shared with the base model

  ASSERT_TRUE(model->set_adapter(random_adapter(*model, LoraScope::kAll)).ok());
  EXPECT_FALSE(at::allclose(model->encode_blocks(blocks).value()[1].k, base_block.k, kTol, kTol));
  EXPECT_NE(model->context_fingerprint(), base_fingerprint);
}

// llama.cpp scales an adapter whose file gives no alpha by 1.
TEST(Lora, AFileWithoutAlphaScalesByOne) {
  auto model = test::load_tiny_model({});
  LoraParams params;
  params.rank = 4;
  params.alpha = 4;  // alpha / rank = 1
  params.scope = LoraScope::kAll;
  auto adapter = LoraAdapter::create(model->config(), params, model->device(), 3).value();
  {
    at::NoGradGuard no_grad;
    for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.05);
  }
  const std::vector<uint8_t> bytes = adapter->bytes(GgmlType::kF32);
  const GgufFile with_alpha = GgufFile::parse(bytes.data(), bytes.size()).value();
  GgufWriter without;
  without.add_string("general.architecture", "llama");
  without.add_string("general.type", "adapter");
  without.add_string("adapter.type", "lora");
  for (const GgufTensorInfo& t : with_alpha.tensors()) {
    without.add_tensor(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.nbytes));
  }
  const std::vector<uint8_t> stripped = without.bytes();
  auto loaded = LoraAdapter::parse(GgufFile::parse(stripped.data(), stripped.size()).value(), model->config());
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  const auto tokens = test::random_tokens(12, 6);
  ASSERT_TRUE(model->set_adapter(adapter).ok());
  const at::Tensor expected = logits_of(*model, tokens);
  ASSERT_TRUE(model->set_adapter(*loaded).ok());
  EXPECT_TRUE(at::allclose(logits_of(*model, tokens), expected, kTol, kTol));
}

TEST(Lora, QueryScopeCannotBeMerged) {
  auto model = test::load_tiny_model({});
  TempFile file;
  ASSERT_TRUE(random_adapter(*model, LoraScope::kQuery)->save(file.path).ok());
  const std::vector<uint8_t> bytes = test::tiny_model_bytes({});
  ModelParams params;
  params.lora = file.path;
  params.lora_merge = true;
  auto merged = Model::load(GgufFile::parse(bytes.data(), bytes.size()).value(), params);
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(merged.error().message.find("query"), std::string::npos);
}

TEST(Lora, BadParamsAndOtherShapesAreRefused) {
  auto model = test::load_tiny_model({});
  LoraParams params;
  params.rank = 0;
  EXPECT_EQ(LoraAdapter::create(model->config(), params).error().code, ErrorCode::kInvalidArgument);
  params = {};
  params.targets = {"attn_qq"};
  EXPECT_EQ(LoraAdapter::create(model->config(), params).error().code, ErrorCode::kInvalidArgument);
  TinyModelSpec wider;
  wider.n_embd = 96;
  auto other = test::load_tiny_model(wider);
  EXPECT_EQ(model->set_adapter(LoraAdapter::create(other->config(), {}).value()).error().code,
            ErrorCode::kInvalidArgument);
  // A file made for the wider model.
  const std::vector<uint8_t> bytes = LoraAdapter::create(other->config(), {}).value()->bytes();
  auto loaded = LoraAdapter::parse(GgufFile::parse(bytes.data(), bytes.size()).value(), model->config());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::kShapeMismatch);
}

// Hand-written broken adapters: each a typed error naming what is wrong.
TEST(Lora, BrokenFilesAreTypedErrors) {
  auto model = test::load_tiny_model({});
  const ModelConfig& c = model->config();
  auto base = [&](const std::string& type, const std::string& arch) {
    GgufWriter w;
    w.add_string("general.architecture", arch);
    w.add_string("general.type", type);
    w.add_string("adapter.type", "lora");
    w.add_f32("adapter.lora.alpha", 8);
    return w;
  };
  auto expect = [&](const GgufWriter& w, ErrorCode code, const std::string& words) {
    const std::vector<uint8_t> bytes = w.bytes();
    auto file = GgufFile::parse(bytes.data(), bytes.size());
    ASSERT_TRUE(file.ok()) << words << ": " << file.error().to_string();
    auto loaded = LoraAdapter::parse(*file, c);
    ASSERT_FALSE(loaded.ok()) << words;
    EXPECT_EQ(loaded.error().code, code) << loaded.error().to_string();
    EXPECT_NE(loaded.error().message.find(words), std::string::npos) << loaded.error().to_string();
  };
  const std::vector<float> a(static_cast<size_t>(c.n_embd * 2), 0.1f), b(static_cast<size_t>(c.n_embd * 2), 0.1f);
  expect(base("model", "llama"), ErrorCode::kInvalidArgument, "general.type");
  expect(base("adapter", "qwen2"), ErrorCode::kInvalidArgument, "'qwen2'");
  expect(base("adapter", "llama"), ErrorCode::kInvalidArgument, "no LoRA tensors");
  GgufWriter half = base("adapter", "llama");
  half.add_tensor_f32("blk.0.attn_output.weight.lora_a", {c.n_embd, 2}, a);
  expect(half, ErrorCode::kInvalidArgument, "without lora_b");
  GgufWriter stranger = base("adapter", "llama");
  stranger.add_tensor_f32("output.weight.lora_a", {c.n_embd, 2}, a);
  expect(stranger, ErrorCode::kInvalidArgument, "output.weight.lora_a");
  GgufWriter deep = base("adapter", "llama");
  deep.add_tensor_f32("blk.9.attn_output.weight.lora_a", {c.n_embd, 2}, a);
  expect(deep, ErrorCode::kShapeMismatch, "layer 9");
  GgufWriter wrong = base("adapter", "llama");
  wrong.add_tensor_f32("blk.0.attn_output.weight.lora_a", {c.n_embd + 1, 2}, std::vector<float>(static_cast<size_t>(c.n_embd + 1) * 2));
  expect(wrong, ErrorCode::kShapeMismatch, "another model");
  GgufWriter ranks = base("adapter", "llama");
  ranks.add_tensor_f32("blk.0.attn_output.weight.lora_a", {c.n_embd, 2}, a);
  ranks.add_tensor_f32("blk.0.attn_output.weight.lora_b", {3, c.n_embd}, std::vector<float>(static_cast<size_t>(c.n_embd * 3)));
  expect(ranks, ErrorCode::kShapeMismatch, "rank");
  GgufWriter nan = base("adapter", "llama");
  std::vector<float> bad = a;
  bad[5] = NAN;
  nan.add_tensor_f32("blk.0.attn_output.weight.lora_a", {c.n_embd, 2}, bad);
  nan.add_tensor_f32("blk.0.attn_output.weight.lora_b", {2, c.n_embd}, b);
  expect(nan, ErrorCode::kCorrupt, "NaN");
  GgufWriter twice = base("adapter", "llama");
  twice.add_tensor_f32("blk.0.attn_output.weight.lora_a", {c.n_embd, 2}, a);
  twice.add_tensor_f32("blk.0.attn_output.weight.lora_a", {c.n_embd, 2}, a);
  const std::vector<uint8_t> twice_bytes = twice.bytes();
  auto twice_file = GgufFile::parse(twice_bytes.data(), twice_bytes.size());
  if (twice_file.ok()) {  // the reader may already refuse duplicate names
    EXPECT_FALSE(LoraAdapter::parse(*twice_file, c).ok());
  }
  EXPECT_EQ(LoraAdapter::load("/nonexistent/adapter.gguf", c).error().code, ErrorCode::kIo);
}

}  // namespace
}  // namespace kvframe::runtime
