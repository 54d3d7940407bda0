// The block-attention engine on a CUDA device (label gpu; skipped without
// one): block mode with reuse against recomputation on the GPU, and the GPU's
// logits against the CPU's, on a tiny random-weight model in fp32.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include "frame_edits.h"
#include "kvframe/runtime_engine/session.h"
#include "tiny_model.h"

namespace kvframe::runtime {
namespace {

// Reuse vs recomputation on one device: as on the CPU (summation order only).
constexpr double kRelativeTolerance = 1e-4;
// GPU vs CPU: different kernels (TF32 is off in libtorch by default for matmuls).
constexpr double kDeviceTolerance = 1e-3;

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

std::unique_ptr<Engine> tiny_engine(const std::string& device) {
  const std::vector<uint8_t> bytes = test::tiny_model_bytes({});
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ModelParams params;
  params.device = device;
  params.dtype = "fp32";
  auto model = Model::load(*file, params);
  auto tokenizer = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(model.ok() && tokenizer.ok());
  auto engine = Engine::create(std::move(model).value(), std::move(tokenizer).value(), std::nullopt);
  return std::move(engine).value();
}

Answer ask(Session& session, const std::string& frame) {
  EXPECT_TRUE(session.update(frame).ok());
  Task task;
  task.instruction = "\nWhat now?\n";
  task.generate.max_tokens = 1;
  auto answer = session.query(task);
  EXPECT_TRUE(answer.ok()) << (answer.ok() ? "" : answer.error().to_string());
  return std::move(answer).value();
}

TEST(GpuSession, BlockReuseMatchesRecomputationAndTheCpu) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto gpu = tiny_engine("cuda"), gpu_fresh = tiny_engine("cuda"), cpu = tiny_engine("cpu");
  SessionParams params;
  params.rules.min_split_bytes = 0;
  params.system_prompt = "You are the game's NPC director.";
  auto on_gpu = Session::open(*gpu, params), on_cpu = Session::open(*cpu, params);
  ASSERT_TRUE(on_gpu.ok() && on_cpu.ok());
  test::FrameEdits frames(9);
  for (int i = 0; i < 50; ++i) {
    frames.edit();
    const Answer cached = ask(**on_gpu, frames.json());
    gpu_fresh->store().clear();
    auto fresh = Session::open(*gpu_fresh, params);
    ASSERT_TRUE(fresh.ok());
    const Answer scratch = ask(**fresh, frames.json());
    const Answer reference = ask(**on_cpu, frames.json());
    ASSERT_LE(relative_error(cached.first_logits, scratch.first_logits), kRelativeTolerance) << "frame " << i;
    ASSERT_LE(relative_error(cached.first_logits, reference.first_logits), kDeviceTolerance) << "frame " << i;
  }
}

}  // namespace
}  // namespace kvframe::runtime
