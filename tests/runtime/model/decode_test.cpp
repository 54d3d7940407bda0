// Model::decode, the batch entry point, on tiny random-weight models: a mixed
// batch (two sequences, interleaved, logits of chosen rows) against separate
// forward() calls; a block over a shared context with logits against
// forward() on a copy of it; errors leave every cache unchanged; and each
// model's thread count stays with the thread that runs it.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <thread>
#include <utility>
#include <vector>

#include "kvframe/runtime/model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::describe;
using test::random_tokens;
using test::token_ids;

// fp32 on the CPU: the batched pass and forward() differ only in summation
// order; the tiny models' logits are of magnitude ~1-10 (branches_test.cpp's).
constexpr double kBatchLogitAtol = 1e-4;

KvCache cache_with(const Model& model, const std::vector<int32_t>& prefix, int64_t room) {
  KvCache cache = *model.new_cache(static_cast<int64_t>(prefix.size()) + room);
  EXPECT_TRUE(model.forward(token_ids(prefix), cache).ok());
  return cache;
}

// Two sequences' runs interleaved token by token, every other token's logits
// kept, against forward(all_logits) of each run into its own cache.
void expect_mixed_batch_matches_forward(const Model& model, int64_t first_run, int64_t second_run) {
  const std::vector<int32_t> a = random_tokens(first_run, 11), b = random_tokens(second_run, 12);
  KvCache cache_a = cache_with(model, random_tokens(7, 13), 64), cache_b = cache_with(model, random_tokens(4, 14), 64);
  KvCache alone_a = cache_with(model, random_tokens(7, 13), 64), alone_b = cache_with(model, random_tokens(4, 14), 64);

  Batch batch;
  batch.caches = {&cache_a, &cache_b};
  std::vector<std::pair<int, int64_t>> kept;  // (sequence, index in its run), in batch order
  for (int64_t i = 0; i < std::max(first_run, second_run); ++i) {
    for (int s = 0; s < 2; ++s) {
      const std::vector<int32_t>& run = s == 0 ? a : b;
      if (i >= static_cast<int64_t>(run.size())) continue;
      const bool keep = (batch.tokens.size() % 2 == 0) || i + 1 == static_cast<int64_t>(run.size());
      batch.add(run[static_cast<size_t>(i)], s, keep);
      if (keep) kept.emplace_back(s, i);
    }
  }
  auto decoded = model.decode(batch);
  ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
  ASSERT_EQ(decoded->logits.size(0), static_cast<int64_t>(kept.size()));

  const at::Tensor want_a = *model.forward(token_ids(a), alone_a, /*all_logits=*/true);
  const at::Tensor want_b = *model.forward(token_ids(b), alone_b, /*all_logits=*/true);
  for (size_t k = 0; k < kept.size(); ++k) {
    const at::Tensor want = (kept[k].first == 0 ? want_a : want_b)[kept[k].second];
    EXPECT_TRUE(at::allclose(decoded->logits[static_cast<int64_t>(k)], want, 0.0, kBatchLogitAtol))
        << "kept row " << k << " (sequence " << kept[k].first << ", token " << kept[k].second << ")";
  }
  for (const auto& [got, want] : {std::pair<KvCache*, KvCache*>{&cache_a, &alone_a}, {&cache_b, &alone_b}}) {
    ASSERT_EQ(got->length, want->length);
    ASSERT_EQ(got->next_position, want->next_position);
    for (size_t l = 0; l < got->k.size(); ++l) {
      EXPECT_TRUE(at::allclose(got->k[l].narrow(1, 0, got->length), want->k[l].narrow(1, 0, want->length), 0.0, 1e-5));
      EXPECT_TRUE(at::allclose(got->v[l].narrow(1, 0, got->length), want->v[l].narrow(1, 0, want->length), 0.0, 1e-5));
    }
  }
}

TEST(Decode, MixedBatchEqualsSeparateForwardCalls) {
  for (const auto& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = test::load_tiny_model(spec);
    expect_mixed_batch_matches_forward(*model, 3, 5);    // short runs: the CPU step kernels
    expect_mixed_batch_matches_forward(*model, 21, 30);  // long ones: tiles and GEMM
  }
}

TEST(Decode, BlockOverContextWithLogitsEqualsForwardOnACopy) {
  for (const auto& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = test::load_tiny_model(spec);
    const std::vector<int32_t> prefix = random_tokens(9, 21), block = random_tokens(6, 22);
    KvCache context = cache_with(*model, prefix, 0);
    KvCache copy = cache_with(*model, prefix, static_cast<int64_t>(block.size()));
    Batch batch;
    batch.attention = Batch::Attention::kBlocks;
    batch.context = &context;
    for (int32_t t : block) batch.add(t, 0, true);
    auto decoded = model->decode(batch);
    ASSERT_TRUE(decoded.ok()) << decoded.error().to_string();
    EXPECT_TRUE(decoded->blocks.empty());
    EXPECT_EQ(context.length, static_cast<int64_t>(prefix.size()));  // only read
    const at::Tensor want = *model->forward(token_ids(block), copy, /*all_logits=*/true);
    EXPECT_TRUE(at::allclose(decoded->logits, want, 0.0, kBatchLogitAtol));
  }
}

TEST(Decode, BadBatchesChangeNoCache) {
  auto model = test::load_tiny_model(test::tiny_shapes().front());
  KvCache a = cache_with(*model, random_tokens(5, 31), 4), b = cache_with(*model, random_tokens(5, 32), 4);
  auto expect_invalid = [&](const Batch& batch, ErrorCode code) {
    auto decoded = model->decode(batch);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.error().code, code) << decoded.error().to_string();
    EXPECT_EQ(a.length, 5);
    EXPECT_EQ(b.length, 5);
  };
  Batch batch;
  batch.caches = {&a, &b};
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // no tokens
  batch.add(1, 0, true);
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // sequence 1 has none
  batch.add(2, 1, true);
  batch.add(3, 2, true);
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // sequence 2 has no cache
  batch = Batch{};
  batch.caches = {&a, &a};
  batch.add(1, 0, true);
  batch.add(2, 1, true);
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // a shared cache
  batch.caches = {&a, &b};
  batch.tokens[1] = model->config().n_vocab;
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // an id outside the vocabulary
  batch.tokens[1] = 2;
  batch.logits.pop_back();
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // flags of another length
  batch = Batch{};
  batch.caches = {&a, &b};
  for (int i = 0; i < 10; ++i) batch.add(1, i % 2, false);
  expect_invalid(batch, ErrorCode::kContextFull);  // 5 more do not fit 4 entries' room
  batch = Batch{};
  batch.attention = Batch::Attention::kBlocks;
  batch.add(1, 0, false);
  expect_invalid(batch, ErrorCode::kInvalidArgument);  // neither logits nor KV
}

// Two models with their own thread counts, run on two threads at once: each
// thread's count is its model's, and the default a new thread starts from is
// left alone.
TEST(Decode, ThreadCountStaysWithItsModelsThread) {
  const int before = at::get_num_threads();
  const int fresh_before = [] {
    int n = 0;
    std::thread([&] { n = at::get_num_threads(); }).join();
    return n;
  }();
  std::vector<std::unique_ptr<Model>> models;
  for (int threads : {1, 3}) {
    ModelParams params;
    params.threads = threads;
    models.push_back(test::load_tiny_model(test::tiny_shapes().front(), params));
    EXPECT_EQ(models.back()->threads(), threads);
  }
  std::vector<int> seen(2, 0);
  std::vector<std::thread> runners;
  for (size_t m = 0; m < models.size(); ++m) {
    runners.emplace_back([&, m] {
      const Model& model = *models[m];
      for (int64_t n : {1, 24}) {  // a step, then a prefill (both backends)
        KvCache cache = *model.new_cache(64);
        EXPECT_TRUE(model.forward(token_ids(random_tokens(n, 41)), cache).ok());
      }
      seen[m] = at::get_num_threads();
    });
  }
  for (std::thread& t : runners) t.join();
  EXPECT_EQ(seen, (std::vector<int>{1, 3}));
  EXPECT_EQ(at::get_num_threads(), before);
  int fresh_after = 0;
  std::thread([&] { fresh_after = at::get_num_threads(); }).join();
  EXPECT_EQ(fresh_after, fresh_before);

  // set_threads changes the next pass's count on the thread that runs it.
  models[0]->set_threads(2);
  std::thread([&] {
    KvCache cache = *models[0]->new_cache(4);
    EXPECT_TRUE(models[0]->forward(token_ids(random_tokens(1, 42)), cache).ok());
    EXPECT_EQ(at::get_num_threads(), 2);
  }).join();
}

}  // namespace
}  // namespace kvframe::runtime
