// The RoPE convention kv_diff relies on: rotations compose additively, so a
// cached key moves from position p to p + delta by rotate(k, delta).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kvframe/kv_core/rope.h"

namespace kvframe::runtime {
namespace {

Rope test_rope() {
  RopeParams p;
  p.head_dim = 64;
  p.freq_base = 100000.0;
  return Rope(p);
}

TEST(Rope, PositionZeroIsIdentity) {
  const Rope rope = test_rope();
  at::Tensor x = at::randn({3, 2, 64});
  EXPECT_TRUE(at::allclose(rope.rotate(x, at::zeros({3}, at::kLong)), x));
}

TEST(Rope, RotationsComposeAdditively) {
  const Rope rope = test_rope();
  at::Tensor x = at::randn({5, 3, 64});
  at::Tensor p = at::tensor(std::vector<int64_t>{0, 7, 100, 1000, 4000});
  at::Tensor delta = at::tensor(std::vector<int64_t>{3, -7, 250, 1, 4095});
  at::Tensor twice = rope.rotate(rope.rotate(x, p), delta);
  at::Tensor once = rope.rotate(x, p + delta);
  // fp32 angles: error grows with position (~1e-4 rad at 8K).
  EXPECT_TRUE(at::allclose(twice, once, 1e-3, 1e-3)) << (twice - once).abs().max().item<float>();
}

TEST(Rope, PairsAreHalfSplitAndPreserveNorm) {
  const Rope rope = test_rope();
  at::Tensor x = at::zeros({1, 1, 64});
  x[0][0][0] = 1.0f;  // element 0 pairs with element 32
  at::Tensor y = rope.rotate(x, at::tensor(std::vector<int64_t>{1}));
  EXPECT_NEAR(y[0][0][0].item<float>(), std::cos(1.0), 1e-6);
  EXPECT_NEAR(y[0][0][32].item<float>(), std::sin(1.0), 1e-6);
  EXPECT_NEAR(y[0][0][1].item<float>(), 0.0, 1e-7);
  at::Tensor r = at::randn({4, 2, 64});
  at::Tensor ry = rope.rotate(r, at::tensor(std::vector<int64_t>{1, 2, 3, 300}));
  EXPECT_TRUE(at::allclose(r.norm(2, -1), ry.norm(2, -1), 1e-5, 1e-5));
}

}  // namespace
}  // namespace kvframe::runtime
