// The libtorch placement backend against the reference rotation.
#include <gtest/gtest.h>

#include "kv_test_util.h"
#include "placement.h"

namespace kvframe::kv_diff {
namespace {

using testing::max_diff;
using testing::random_block;
using testing::reference_k;
using testing::tiny_config;

struct Buffer {
  at::Tensor k, v;
  explicit Buffer(int64_t capacity, at::ScalarType dtype = at::kFloat) {
    const runtime::ModelConfig c = tiny_config();
    k = at::randn({c.n_layer, c.n_head_kv, capacity, c.head_dim}).to(dtype);
    v = at::randn({c.n_layer, c.n_head_kv, capacity, c.head_dim}).to(dtype);
  }
};

TEST(Placement, RotatesKeysFromTheBaseAndCopiesValues) {
  const runtime::Rope rope(tiny_config().rope);
  Buffer buf(64);
  const at::Tensor k0 = buf.k.clone(), v0 = buf.v.clone();
  const runtime::BlockKv a = random_block(5), b = random_block(7), c = random_block(3);
  // b lands in memory before a; c only moves (its values stay as they are).
  apply_placements_torch({{&a, 20, 100, true}, {&b, 2, 4000, true}, {&c, 40, 7, false}}, {buf.k, buf.v, &rope});

  EXPECT_LE(max_diff(buf.k.narrow(2, 20, 5), reference_k(rope, a.k, 100)), 1e-6);
  EXPECT_LE(max_diff(buf.k.narrow(2, 2, 7), reference_k(rope, b.k, 4000)), 1e-6);
  EXPECT_LE(max_diff(buf.k.narrow(2, 40, 3), reference_k(rope, c.k, 7)), 1e-6);
  EXPECT_TRUE(at::equal(buf.v.narrow(2, 20, 5), a.v));
  EXPECT_TRUE(at::equal(buf.v.narrow(2, 2, 7), b.v));
  EXPECT_TRUE(at::equal(buf.v.narrow(2, 40, 3), v0.narrow(2, 40, 3)));
  // Everything else untouched.
  for (auto [from, to] : {std::pair<int64_t, int64_t>{0, 2}, {9, 20}, {25, 40}, {43, 64}}) {
    EXPECT_TRUE(at::equal(buf.k.narrow(2, from, to - from), k0.narrow(2, from, to - from))) << from;
    EXPECT_TRUE(at::equal(buf.v.narrow(2, from, to - from), v0.narrow(2, from, to - from))) << from;
  }
}

TEST(Placement, RotatesInFp32AndCastsOnce) {
  const runtime::Rope rope(tiny_config().rope);
  Buffer buf(16, at::kBFloat16);
  const runtime::BlockKv a = random_block(6);
  apply_placements_torch({{&a, 3, 1234, true}}, {buf.k, buf.v, &rope});
  EXPECT_TRUE(at::equal(buf.k.narrow(2, 3, 6), reference_k(rope, a.k, 1234).to(at::kBFloat16)));
  EXPECT_TRUE(at::equal(buf.v.narrow(2, 3, 6), a.v.to(at::kBFloat16)));
}

TEST(Placement, CpuBuffersNeverTakeTheCudaKernel) {
  const runtime::Rope rope(tiny_config().rope);
  Buffer buf(8);
  const runtime::BlockKv a = random_block(2);
  EXPECT_FALSE(uses_cuda_kernel({{&a, 0, 0, true}}, {buf.k, buf.v, &rope}));
}

}  // namespace
}  // namespace kvframe::kv_diff
