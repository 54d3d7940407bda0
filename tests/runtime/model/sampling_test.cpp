#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>

#include "kvframe/runtime/sampling.h"

namespace kvframe::runtime {
namespace {

at::Tensor logits_of(std::vector<float> v) { return at::tensor(v, at::kFloat); }

TEST(Sampler, GreedyTakesTheFirstMaximum) {
  Sampler s({});
  EXPECT_EQ(s.sample(logits_of({0.1f, 3.0f, -1.0f, 3.0f})), 1);
  EXPECT_EQ(s.sample(logits_of({0.1f, 3.0f, -1.0f, 3.0f}).unsqueeze(0)), 1);  // [1, vocab] too
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDifferentTokens) {
  const at::Tensor logits = at::randn({1000});
  auto run = [&](uint64_t seed) {
    Sampler s({1.0f, 0, 1.0f, seed});
    std::vector<TokenId> out;
    for (int i = 0; i < 50; ++i) out.push_back(s.sample(logits));
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(Sampler, TopKOneAndTinyTopPAreGreedy) {
  const at::Tensor logits = at::randn({500});
  const TokenId best = Sampler({}).sample(logits);
  Sampler k1({2.0f, 1, 1.0f, 3});
  Sampler p0({2.0f, 0, 1e-6f, 3});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(k1.sample(logits), best);
    EXPECT_EQ(p0.sample(logits), best);
  }
}

TEST(Sampler, FrequenciesFollowTheTemperedSoftmax) {
  // logits log(0.5), log(0.3), log(0.2) at temperature 1: those probabilities.
  const at::Tensor logits = logits_of({std::log(0.5f), std::log(0.3f), std::log(0.2f), -1e9f});
  Sampler s({1.0f, 0, 1.0f, 11});
  std::map<TokenId, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[s.sample(logits)];
  EXPECT_NEAR(counts[0] / double(n), 0.5, 0.02);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.02);
  EXPECT_NEAR(counts[2] / double(n), 0.2, 0.02);
  EXPECT_EQ(counts[3], 0);
  // top-p 0.75 keeps {0, 1}: renormalised 0.625 / 0.375.
  Sampler p({1.0f, 0, 0.75f, 12});
  std::map<TokenId, int> top_p;
  for (int i = 0; i < n; ++i) ++top_p[p.sample(logits)];
  EXPECT_NEAR(top_p[0] / double(n), 0.625, 0.02);
  EXPECT_EQ(top_p[2], 0);
}

}  // namespace
}  // namespace kvframe::runtime
