// The CUDA placement path (the fused kernel when this build has it, else
// libtorch on the GPU) against the CPU path. Skips without a GPU.
#include <gtest/gtest.h>

#include "kv_test_util.h"
#include "kvframe/kv_diff/assembled_kv.h"
#include "placement.h"

namespace kvframe::kv_diff {
namespace {

using testing::max_diff;
using testing::random_block;
using testing::stored;
using testing::tiny_config;

class CudaPlacement : public ::testing::TestWithParam<at::ScalarType> {
 protected:
  void SetUp() override {
    if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device (or a CPU-only libtorch)";
  }
};

TEST_P(CudaPlacement, MatchesTheCpuPath) {
  const at::ScalarType dtype = GetParam();
  const runtime::ModelConfig c = tiny_config();
  const runtime::Rope rope(c.rope);
  const at::Device gpu(at::kCUDA);
  constexpr int64_t kCapacity = 256;
  std::vector<runtime::BlockKv> cpu_blocks, gpu_blocks;
  for (int64_t n : {1, 7, 33, 100}) {
    runtime::BlockKv b = random_block(n);
    cpu_blocks.push_back({b.k.to(dtype), b.v.to(dtype)});
    gpu_blocks.push_back({b.k.to(gpu, dtype), b.v.to(gpu, dtype)});
  }
  // Out of memory order, far positions (large angles), one keys-only move.
  auto placements = [](const std::vector<runtime::BlockKv>& b) {
    return std::vector<Placement>{{&b[0], 200, 0, true}, {&b[1], 150, 5000, false}, {&b[2], 3, 31, true},
                                  {&b[3], 40, 123456, true}};
  };
  const at::Tensor init_k = at::randn({c.n_layer, c.n_head_kv, kCapacity, c.head_dim}).to(dtype);
  const at::Tensor init_v = at::randn({c.n_layer, c.n_head_kv, kCapacity, c.head_dim}).to(dtype);
  PlacementTarget cpu{init_k.clone(), init_v.clone(), &rope};
  PlacementTarget cuda{init_k.to(gpu), init_v.to(gpu), &rope};
  apply_placements_torch(placements(cpu_blocks), cpu);
  std::cout << "backend: " << (uses_cuda_kernel(placements(gpu_blocks), cuda) ? "CUDA kernel" : "libtorch") << "\n";
  apply_placements(placements(gpu_blocks), cuda);

  // fp32: sincosf and libtorch's CPU sin/cos of the same fp32 angle differ by
  // an ulp or so; bf16/fp16: that ulp may flip one rounding of the result.
  const double tol = dtype == at::kFloat ? 1e-5 : dtype == at::kHalf ? 4e-3 : 3e-2;
  EXPECT_LE(max_diff(cuda.k, cpu.k), tol);
  EXPECT_TRUE(at::equal(cuda.v.cpu(), cpu.v));  // copied bit for bit, and untouched where not placed
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaPlacement, ::testing::Values(at::kFloat, at::kBFloat16, at::kHalf));

TEST(CudaAssembledKv, MatchesTheCpuBuffer) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device (or a CPU-only libtorch)";
  auto cpu_model = testing::tiny_model("cpu");
  auto gpu_model = testing::tiny_model("cuda");
  ASSERT_EQ(gpu_model->dtype(), at::kBFloat16);
  auto cpu = AssembledKv::create(cpu_model->kv_shape(), cpu_model->rope(), 128, Layout::kSlack).value();
  auto gpu = AssembledKv::create(gpu_model->kv_shape(), gpu_model->rope(), 128, Layout::kSlack).value();
  cpu.reset();
  gpu.reset();
  uint64_t serial = 1;
  std::vector<runtime::BlockKv> bases;
  for (int i = 0; i < 4; ++i) bases.push_back(random_block(5 + i));
  for (int frame = 0; frame < 5; ++frame) {
    bases[1] = random_block(6 + frame);  // grows: the rest rotate
    std::vector<PlacedBlock> on_cpu, on_gpu;
    for (uint64_t id = 0; id < bases.size(); ++id) {
      const runtime::BlockKv& b = bases[id];
      on_cpu.push_back({id, stored({b.k.to(at::kBFloat16), b.v.to(at::kBFloat16)}, serial)});
      on_gpu.push_back({id, stored({b.k.to(at::kCUDA, at::kBFloat16), b.v.to(at::kCUDA, at::kBFloat16)}, serial)});
      ++serial;
    }
    ASSERT_TRUE(cpu.assemble(on_cpu).ok());
    ASSERT_TRUE(gpu.assemble(on_gpu).ok());
    EXPECT_LE(max_diff(at::stack(gpu.cache().k), at::stack(cpu.cache().k)), 3e-2);
    EXPECT_TRUE(at::equal(at::stack(gpu.cache().v).cpu(), at::stack(cpu.cache().v)));
    ASSERT_EQ(gpu.cache().padding.defined(), cpu.cache().padding.defined());
    if (cpu.cache().padding.defined()) {
      EXPECT_TRUE(at::equal(gpu.cache().padding.cpu(), cpu.cache().padding));
    }
  }
}

}  // namespace
}  // namespace kvframe::kv_diff
