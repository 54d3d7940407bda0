// torch's fused flash kernels on a CUDA device (label gpu; skipped without
// one): every kernel the runtime routes to is on for bf16 and fp16, and a
// tiny model's passes through them (a prefill, a query after cached entries,
// decoding steps, block encoding with and without a context) agree with the
// same weights on the explicit path (fp32, where no fused kernel runs); and
// decoding steps replayed from CUDA graphs match eager ones.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include "fused_attention.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

// bf16 weights and activations against fp32: rounding, relative to the largest value.
constexpr double kBf16Tolerance = 3e-2;

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  const at::Tensor g = got.to(at::kCPU, at::kFloat), w = want.to(at::kCPU, at::kFloat);
  return (g - w).abs().max().item<double>() / w.abs().max().item<double>();
}

std::unique_ptr<Model> tiny_on_cuda(const char* dtype, bool cuda_graphs = true) {
  ModelParams params;
  params.device = "cuda";
  params.dtype = dtype;
  params.cuda_graphs = cuda_graphs;
  return test::load_tiny_model(test::TinyModelSpec{}, params);
}

TEST(FusedAttention, EveryKernelIsOnForHalfPrecision) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
#ifndef KVFRAME_TORCH_SDPA
  GTEST_SKIP() << "libtorch before 2.5: the explicit path everywhere";
#endif
  for (const at::ScalarType dtype : {at::kBFloat16, at::kHalf}) {
    const FusedSupport s = fused_support(at::Device("cuda"), dtype);
    EXPECT_TRUE(s.cache) << c10::toString(dtype);
    EXPECT_TRUE(s.cache_after) << c10::toString(dtype);
    EXPECT_TRUE(s.folded) << c10::toString(dtype);
    EXPECT_TRUE(s.rows) << c10::toString(dtype);
  }
  const FusedSupport fp32 = fused_support(at::Device("cuda"), at::kFloat);
  EXPECT_FALSE(fp32.cache || fp32.cache_after || fp32.folded || fp32.rows || fp32.step);
}

// RoPE's three-kernel rotation on CUDA (Rope::Table's full tables) against
// the CPU's, in fp32, at positions up to 32K.
TEST(FusedAttention, CudaRotationMatchesTheCpu) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  RopeParams params;
  params.head_dim = 128;
  params.freq_base = 500000.0;
  const Rope rope(params);
  const at::Tensor positions = at::randint(0, 32768, {64}, at::kLong), x = at::randn({64, 8, 128});
  const at::Tensor cpu = Rope::apply(x, rope.table(positions));
  const Rope::Table table = rope.table(positions.cuda());
  ASSERT_TRUE(table.cos_full.defined());
  EXPECT_LE(relative_error(Rope::apply(x.cuda(), table), cpu), 1e-5);
}

// A prefill of 40 tokens, a query of 12 after them, then 8 decoding steps.
std::vector<at::Tensor> cache_passes(const Model& model, const std::vector<int32_t>& tokens) {
  auto cache = model.new_cache(128);
  EXPECT_TRUE(cache.ok());
  std::vector<at::Tensor> logits;
  auto pass = [&](int64_t from, int64_t n) {
    const std::vector<int64_t> ids(tokens.begin() + from, tokens.begin() + from + n);
    auto out = model.forward(at::tensor(ids, at::kLong), *cache, /*all_logits=*/true);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    logits.push_back(*out);
  };
  pass(0, 40);
  pass(40, 12);
  for (int64_t i = 52; i < 60; ++i) pass(i, 1);
  return logits;
}

TEST(FusedAttention, CachePassesMatchTheExplicitPath) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto fused = tiny_on_cuda("bf16"), exact = tiny_on_cuda("fp32");
  const std::vector<int32_t> tokens = test::random_tokens(60, 7);
  const auto got = cache_passes(*fused, tokens), want = cache_passes(*exact, tokens);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(relative_error(got[i], want[i]), kBf16Tolerance) << "pass " << i;
  }
}

// A query of 12 tokens after 1,100 cached entries: the query heads folded
// over the cached entries, the own entries apart (fused_cache_attention).
TEST(FusedAttention, QueryAfterALongCacheMatchesTheExplicitPath) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto fused = tiny_on_cuda("bf16"), exact = tiny_on_cuda("fp32");
  const std::vector<int32_t> tokens = test::random_tokens(1112, 9);
  std::vector<at::Tensor> logits;
  for (const Model* model : {fused.get(), exact.get()}) {
    auto cache = model->new_cache(1200);
    ASSERT_TRUE(cache.ok());
    const std::vector<int64_t> context(tokens.begin(), tokens.begin() + 1100), query(tokens.begin() + 1100, tokens.end());
    ASSERT_TRUE(model->forward(at::tensor(context, at::kLong), *cache).ok());
    auto out = model->forward(at::tensor(query, at::kLong), *cache, /*all_logits=*/true);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    logits.push_back(*out);
  }
  EXPECT_LE(relative_error(logits[0], logits[1]), kBf16Tolerance);
}

TEST(FusedAttention, BlockEncodingMatchesTheExplicitPath) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto fused = tiny_on_cuda("bf16"), exact = tiny_on_cuda("fp32");
  const auto blocks = test::random_rows({17, 5, 1, 33, 5}, 11);
  const std::vector<int32_t> prefix = test::random_tokens(9, 12);
  for (const bool after_prefix : {false, true}) {
    std::vector<std::vector<BlockKv>> encoded;
    for (const Model* model : {fused.get(), exact.get()}) {
      auto context = model->new_cache(32);
      ASSERT_TRUE(context.ok());
      if (after_prefix) {
        const std::vector<int64_t> ids(prefix.begin(), prefix.end());
        ASSERT_TRUE(model->forward(at::tensor(ids, at::kLong), *context).ok());
      }
      auto out = model->encode_blocks(blocks, after_prefix ? &*context : nullptr);
      ASSERT_TRUE(out.ok()) << out.error().to_string();
      encoded.push_back(std::move(out).value());
    }
    for (size_t b = 0; b < blocks.size(); ++b) {
      EXPECT_LE(relative_error(encoded[0][b].k, encoded[1][b].k), kBf16Tolerance) << "block " << b << " keys";
      EXPECT_LE(relative_error(encoded[0][b].v, encoded[1][b].v), kBf16Tolerance) << "block " << b << " values";
    }
  }
}

// Decoding steps replayed from CUDA graphs (decode_graph.h) against eager
// steps: two caches stepped in turn (a graph each), 40 steps apiece, so
// every replay reads the length it was given, not the one it was captured at.
TEST(DecodeGraphs, ReplayedStepsMatchEagerSteps) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto graphed = tiny_on_cuda("bf16", true), eager = tiny_on_cuda("bf16", false);
  const std::vector<int32_t> tokens = test::random_tokens(70, 21);
  struct Pair {
    KvCache graphed, eager;
  };
  std::vector<Pair> caches;
  for (int64_t prefill : {30, 17}) {
    Pair p{*graphed->new_cache(96), *eager->new_cache(96)};
    const std::vector<int64_t> ids(tokens.begin(), tokens.begin() + prefill);
    ASSERT_TRUE(graphed->forward(at::tensor(ids, at::kLong), p.graphed).ok());
    ASSERT_TRUE(eager->forward(at::tensor(ids, at::kLong), p.eager).ok());
    caches.push_back(std::move(p));
  }
  for (int step = 0; step < 40; ++step) {
    for (size_t c = 0; c < caches.size(); ++c) {
      Pair& p = caches[c];
      const at::Tensor id = at::tensor({static_cast<int64_t>(tokens[static_cast<size_t>(30 + step)])}, at::kLong);
      auto got = graphed->forward(id, p.graphed), want = eager->forward(id, p.eager);
      ASSERT_TRUE(got.ok() && want.ok());
      ASSERT_LE(relative_error(*got, *want), 1e-2) << "cache " << c << ", step " << step;
      ASSERT_EQ(p.graphed.length, p.eager.length);
    }
  }
  for (const Pair& p : caches) {
    for (size_t l = 0; l < p.graphed.k.size(); ++l) {
      EXPECT_LE(relative_error(p.graphed.k[l].narrow(1, 0, p.graphed.length),
                               p.eager.k[l].narrow(1, 0, p.eager.length)), 1e-2) << "layer " << l;
    }
  }
}

}  // namespace
}  // namespace kvframe::runtime
