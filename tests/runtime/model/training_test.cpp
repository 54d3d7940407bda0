// Training sees exactly the attention inference does: Model::context_kv +
// forward_over (the training passes) against the inference engine's own
// paths on tiny random-weight models —
//   block mask:  prefix prefilled, blocks through encode_blocks, placed by
//                kv_diff's AssembledKv, the query run by forward();
//   causal mask: the whole prompt through forward() (what `full` mode runs).
// And they are differentiable: gradients reach an adapter's parameters, and
// only where the adapter's scope says.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <string>
#include <vector>

#include "kvframe/kv_diff/assembled_kv.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TinyModelSpec;

// fp32 on the CPU: the training passes and inference differ only in
// summation order. The bound: logits within 1e-4 relative.
constexpr double kRtol = 1e-4, kAtol = 1e-4;

std::vector<int32_t> query_tokens(const PromptSample& s) {
  std::vector<int32_t> q = s.final_block;
  q.insert(q.end(), s.answer.begin(), s.answer.end() - 1);  // the last answer token predicts nothing
  return q;
}

int64_t answer_rows(const PromptSample& s) { return static_cast<int64_t>(s.answer.size()); }

PromptSample random_sample(int64_t prefix, const std::vector<int64_t>& blocks, uint32_t seed) {
  PromptSample s;
  s.prefix = test::random_tokens(prefix, seed);
  s.blocks = test::random_rows(blocks, seed + 100);
  s.final_block = test::random_tokens(6, seed + 200);
  s.answer = test::random_tokens(5, seed + 300);
  return s;
}

// block mode as a session runs it (block_context.cpp), logits of the answer
// rows: the slack layout, or the compact one where windows count entries.
at::Tensor block_mode(const Model& model, const PromptSample& s, bool after_prefix) {
  const int64_t capacity = 2 * (s.context_tokens() + static_cast<int64_t>(query_tokens(s).size()));
  const auto layout = model.config().sliding_window > 0 ? kv_diff::Layout::kCompact : kv_diff::Layout::kSlack;
  auto kv = kv_diff::AssembledKv::create(model.kv_shape(), model.rope(), capacity, layout).value();
  kv.reset();
  if (!s.prefix.empty()) {
    EXPECT_TRUE(model.forward(test::token_ids(s.prefix), kv.cache(), false, PromptPart::kContext).ok());
  }
  kv.seal_prefix();
  KvCache prefix = kv.cache();
  prefix.length = prefix.next_position = kv.prefix_length();
  prefix.padding = at::Tensor();
  auto encoded = model.encode_blocks(s.blocks, after_prefix && !s.prefix.empty() ? &prefix : nullptr);
  EXPECT_TRUE(encoded.ok()) << encoded.error().to_string();
  std::vector<kv_diff::PlacedBlock> placed;
  for (size_t b = 0; b < s.blocks.size(); ++b) {
    auto stored = std::make_shared<kv_diff::StoredBlock>();
    stored->kv = (*encoded)[b];
    placed.push_back({b + 1, stored});
  }
  EXPECT_TRUE(kv.assemble(placed).ok());
  auto logits = model.forward(test::token_ids(query_tokens(s)), kv.cache(), /*all_logits=*/true);
  EXPECT_TRUE(logits.ok()) << logits.error().to_string();
  return logits->narrow(0, logits->size(0) - answer_rows(s), answer_rows(s));
}

// full mode: the whole prompt causally.
at::Tensor full_mode(const Model& model, const PromptSample& s) {
  std::vector<int32_t> all = s.prefix;
  for (const auto& block : s.blocks) all.insert(all.end(), block.begin(), block.end());
  const std::vector<int32_t> query = query_tokens(s);
  all.insert(all.end(), query.begin(), query.end());
  KvCache cache = *model.new_cache(static_cast<int64_t>(all.size()));
  auto logits = model.forward(test::token_ids(all), cache, /*all_logits=*/true);
  EXPECT_TRUE(logits.ok()) << logits.error().to_string();
  return logits->narrow(0, logits->size(0) - answer_rows(s), answer_rows(s));
}

at::Tensor training(const Model& model, const PromptSample& s, AttentionMask mask, bool after_prefix = false) {
  auto context = model.context_kv(s, mask, after_prefix);
  EXPECT_TRUE(context.ok()) << context.error().to_string();
  auto logits = model.forward_over(query_tokens(s), *context, PromptPart::kQuery, answer_rows(s));
  EXPECT_TRUE(logits.ok()) << logits.error().to_string();
  return *logits;
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::allclose(got, want, kRtol, kAtol))
      << what << ": logits differ by up to " << (got - want).abs().max().item<double>();
}

TEST(TrainingForward, BlockMaskEqualsEncodeAssembleQuery) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(test::describe(spec));
    auto model = test::load_tiny_model(spec);
    for (bool after_prefix : {false, true}) {
      SCOPED_TRACE(after_prefix ? "blocks after the prefix" : "blocks alone");
      const PromptSample s = random_sample(7, {5, 12, 1, 30, 8, 12}, 1);
      expect_close(training(*model, s, AttentionMask::kBlock, after_prefix), block_mode(*model, s, after_prefix),
                   "block mask");
    }
  }
}

TEST(TrainingForward, CausalMaskEqualsFull) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(test::describe(spec));
    auto model = test::load_tiny_model(spec);
    const PromptSample s = random_sample(7, {5, 12, 1, 30, 8}, 2);
    expect_close(training(*model, s, AttentionMask::kCausal), full_mode(*model, s), "causal mask");
  }
}

TEST(TrainingForward, NoPrefixAndNoBlocksAreBothFine) {
  auto model = test::load_tiny_model({});
  const PromptSample no_prefix = random_sample(0, {9, 3}, 3);
  expect_close(training(*model, no_prefix, AttentionMask::kBlock), block_mode(*model, no_prefix, false), "no prefix");
  const PromptSample no_blocks = random_sample(11, {}, 4);
  expect_close(training(*model, no_blocks, AttentionMask::kBlock), full_mode(*model, no_blocks), "no blocks");
  EXPECT_EQ(model->context_kv(random_sample(0, {}, 5), AttentionMask::kBlock).error().code,
            ErrorCode::kInvalidArgument);
}

// Long enough that attention runs in chunks of query rows.
TEST(TrainingForward, LongContextsAgreeToo) {
  for (const TinyModelSpec& spec : {TinyModelSpec{}, test::windowed_shape()}) {
    SCOPED_TRACE(test::describe(spec));
    auto model = test::load_tiny_model(spec);
    const PromptSample s = random_sample(40, {2100, 600, 3}, 6);
    expect_close(training(*model, s, AttentionMask::kBlock), block_mode(*model, s, false), "block mask");
    expect_close(training(*model, s, AttentionMask::kCausal), full_mode(*model, s), "causal mask");
  }
}

// Gemma 3's shape at a window of 5 (layer 0 local), every part longer than
// the window: each mask windows as the inference path it trains for.
TEST(TrainingForward, WindowedLayersAgreeWithInference) {
  auto model = test::load_tiny_model(test::windowed_shape());
  for (bool after_prefix : {false, true}) {
    SCOPED_TRACE(after_prefix ? "blocks after the prefix" : "blocks alone");
    const PromptSample s = random_sample(7, {5, 12, 1, 30, 8, 12}, 11);
    expect_close(training(*model, s, AttentionMask::kBlock, after_prefix), block_mode(*model, s, after_prefix),
                 "block mask");
  }
  const PromptSample s = random_sample(7, {5, 12, 1, 30, 8}, 12);
  expect_close(training(*model, s, AttentionMask::kCausal), full_mode(*model, s), "causal mask");
  const PromptSample no_blocks = random_sample(11, {}, 13);
  expect_close(training(*model, no_blocks, AttentionMask::kBlock), full_mode(*model, no_blocks), "no blocks");
}

// Padding entries are not positions, which windows count: refused, as forward() does.
TEST(TrainingForward, WindowedModelRefusesAPaddedContext) {
  auto model = test::load_tiny_model(test::windowed_shape());
  KvCache context = model->context_kv(random_sample(3, {4}, 14), AttentionMask::kBlock).value();
  context.padding = at::zeros({context.capacity}, at::kBool);
  EXPECT_EQ(model->forward_over({1, 2}, context).error().code, ErrorCode::kUnsupportedArch);
}

double answer_loss_backward(const Model& model, const PromptSample& s, AttentionMask mask) {
  at::Tensor logits = training(model, s, mask);
  at::Tensor loss = at::cross_entropy_loss(logits, test::token_ids(s.answer));
  loss.backward();
  return loss.item<double>();
}

// B random (not zero) so both halves of every pair get a gradient.
std::shared_ptr<LoraAdapter> trainable_adapter(const Model& model, LoraScope scope) {
  LoraParams params;
  params.rank = 4;
  params.scope = scope;
  auto adapter = LoraAdapter::create(model.config(), params, model.device(), 7).value();
  for (size_t i = 1; i < adapter->parameters().size(); i += 2) {
    at::Tensor b = adapter->parameters()[i];
    at::NoGradGuard no_grad;
    b.normal_(0, 0.05);
  }
  for (const at::Tensor& p : adapter->parameters()) p.requires_grad_(true);
  return adapter;
}

TEST(TrainingForward, GradientsReachTheAdapterAndNeverTheWeights) {
  for (const TinyModelSpec& spec : {TinyModelSpec{}, test::windowed_shape()}) {
    SCOPED_TRACE(test::describe(spec));
    auto model = test::load_tiny_model(spec);
    auto adapter = trainable_adapter(*model, LoraScope::kAll);
    ASSERT_TRUE(model->set_adapter(adapter).ok());
    const PromptSample s = random_sample(7, {5, 12, 1}, 7);
    for (AttentionMask mask : {AttentionMask::kBlock, AttentionMask::kCausal}) {
      for (const at::Tensor& p : adapter->parameters()) p.mutable_grad() = at::Tensor();
      const double loss = answer_loss_backward(*model, s, mask);
      EXPECT_TRUE(std::isfinite(loss));
      for (size_t i = 0; i < adapter->parameters().size(); ++i) {
        const at::Tensor& g = adapter->parameters()[i].grad();
        ASSERT_TRUE(g.defined()) << adapter->parameter_names()[i];
        EXPECT_TRUE(g.isfinite().all().item<bool>()) << adapter->parameter_names()[i];
        EXPECT_GT(g.abs().sum().item<double>(), 0) << adapter->parameter_names()[i];
      }
    }
  }
}

TEST(TrainingForward, QueryScopeKeepsTheContextOutOfTheGraph) {
  auto model = test::load_tiny_model({});
  auto adapter = trainable_adapter(*model, LoraScope::kQuery);
  ASSERT_TRUE(model->set_adapter(adapter).ok());
  const PromptSample s = random_sample(7, {5, 12, 1}, 8);
  auto context = model->context_kv(s, AttentionMask::kBlock);
  ASSERT_TRUE(context.ok());
  EXPECT_FALSE(context->k[0].requires_grad());  // base-model KV: what the block store holds
  answer_loss_backward(*model, s, AttentionMask::kBlock);
  EXPECT_GT(adapter->parameters()[0].grad().abs().sum().item<double>(), 0);

  // And the query scope's block-mode logits are still block mode's.
  at::NoGradGuard no_grad;
  expect_close(training(*model, s, AttentionMask::kBlock), block_mode(*model, s, false), "query-scope block mask");
}

// The CPU's weights as stored (the default) against a dense copy of them
// (ModelParams::step_kernels = false): the same logits and gradients for
// every pass a session and training run.
TEST(TrainingForward, StoredWeightsTrainAndEncodeAsDenseOnes) {
  ModelParams stored_params, dense_params;
  stored_params.int8_activations = false;  // fp32 arithmetic on both sides
  dense_params.step_kernels = false;
  for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0, GgmlType::kQ4_1}) {
    TinyModelSpec spec;
    spec.weight_type = type;
    SCOPED_TRACE(ggml_type_name(type));
    auto stored = test::load_tiny_model(spec, stored_params), dense = test::load_tiny_model(spec, dense_params);
    const PromptSample s = random_sample(7, {5, 40, 1, 12}, 10);
    expect_close(block_mode(*stored, s, true), block_mode(*dense, s, true), "block mode");
    expect_close(full_mode(*stored, s), full_mode(*dense, s), "full mode");
    for (LoraScope scope : {LoraScope::kAll, LoraScope::kQuery}) {
      auto adapter = trainable_adapter(*stored, scope);
      std::vector<at::Tensor> grads;
      for (const Model* model : {stored.get(), dense.get()}) {
        ASSERT_TRUE(const_cast<Model*>(model)->set_adapter(adapter).ok());
        for (const at::Tensor& p : adapter->parameters()) p.mutable_grad() = at::Tensor();
        answer_loss_backward(*model, s, AttentionMask::kBlock);
        grads.push_back(adapter->parameters()[0].grad().clone());
        at::NoGradGuard no_grad;
        expect_close(training(*model, s, AttentionMask::kBlock), block_mode(*model, s, false), "adapted block mask");
      }
      EXPECT_TRUE(at::allclose(grads[0], grads[1], 1e-4, 1e-6)) << (grads[0] - grads[1]).abs().max().item<double>();
    }
  }
}

TEST(TrainingForward, BadInputsAreInvalidArgument) {
  auto model = test::load_tiny_model({});
  PromptSample s = random_sample(3, {4}, 9);
  KvCache context = model->context_kv(s, AttentionMask::kBlock).value();
  EXPECT_EQ(model->forward_over({}, context).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(model->forward_over({1, 2}, context, PromptPart::kQuery, 3).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(model->forward_over({1, 100000}, context).error().code, ErrorCode::kInvalidArgument);
  s.blocks.push_back({});
  EXPECT_EQ(model->context_kv(s, AttentionMask::kBlock).error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvframe::runtime
