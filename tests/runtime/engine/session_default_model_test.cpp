// The block-attention engine on the default model (SmolLM2-135M-Instruct,
// fp32 on CPU, its ChatML template): cache reuse against recomputation, and
// prefix mode against full, over streams of random frame edits (every kind:
// values, lengths, blocks added, removed and reordered).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "default_model.h"
#include "frame_edits.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::runtime {
namespace {

// max |a - b| / max |b| between a cached path and its recomputation (fp32).
constexpr double kRelativeTolerance = 1e-4;

double relative_error(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

std::unique_ptr<Engine> load_engine(const std::string& path) {
  ModelParams fp32;
  fp32.dtype = "fp32";  // the tolerance below is fp32's; the default dtype follows the CPU
  // The modes' texts are compared too: rounded activations (bf16, or int8
  // in decoding steps) would flip the near-ties that fp32's summation
  // orders leave alone.
  fp32.int8_activations = false;
  auto engine = Engine::load(path, fp32);
  EXPECT_TRUE(engine.ok()) << (engine.ok() ? "" : engine.error().to_string());
  return std::move(engine).value();
}

SessionParams params(AttentionMode mode) {
  SessionParams p;
  p.mode = mode;
  p.system_prompt = "You direct the NPCs of a MOBA. Answer with one short sentence.";
  p.rules.min_split_bytes = 0;
  p.context = 4096;
  return p;
}

Answer ask(Session& session, const std::string& frame, int32_t max_tokens) {
  EXPECT_TRUE(session.update(frame).ok());
  Task task;
  task.instruction = "\nWhich unit is in the most danger, and why?";
  task.generate.max_tokens = max_tokens;
  auto answer = session.query(task);
  EXPECT_TRUE(answer.ok()) << (answer.ok() ? "" : answer.error().to_string());
  return std::move(answer).value();
}

// 20 frames here, every kind of edit more than once (the default model on one
// thread is among the slowest tests of the suite); the 200-frame greedy-text
// run is the tiny-model test in session_test.cpp.
TEST(DefaultModelBlockReuse, ReuseMatchesRecomputationAndGreedyTextOver20Frames) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(path);
  auto engine = load_engine(path);
  const SessionParams block = params(AttentionMode::kBlock);
  auto session = Session::open(*engine, block);
  ASSERT_TRUE(session.ok());
  test::FrameEdits frames(17, /*units=*/6);
  double worst = 0;
  for (int i = 0; i < 20; ++i) {
    const char* kind = frames.edit();
    const Answer cached = ask(**session, frames.json(), 4);
    engine->store().clear();  // nothing to reuse: every block encoded for this frame alone
    auto fresh = Session::open(*engine, block);
    ASSERT_TRUE(fresh.ok());
    const Answer scratch = ask(**fresh, frames.json(), 4);
    ASSERT_EQ(scratch.report.blocks_encoded, scratch.report.blocks_total);
    const double error = relative_error(cached.first_logits, scratch.first_logits);
    worst = std::max(worst, error);
    ASSERT_LE(error, kRelativeTolerance) << "frame " << i << " after a '" << kind << "' edit";
    ASSERT_EQ(cached.text, scratch.text) << "frame " << i;
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
}

TEST(DefaultModelModes, PrefixEqualsFullOnEveryFrame) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(path);
  auto engine = load_engine(path);
  auto prefix = Session::open(*engine, params(AttentionMode::kPrefix));
  auto full = Session::open(*engine, params(AttentionMode::kFull));
  ASSERT_TRUE(prefix.ok() && full.ok());
  test::FrameEdits frames(23, /*units=*/6);
  for (int i = 0; i < 12; ++i) {
    frames.edit();
    const Answer a = ask(**prefix, frames.json(), 4), b = ask(**full, frames.json(), 4);
    ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance) << "frame " << i;
    ASSERT_EQ(a.text, b.text) << "frame " << i;
  }
}

}  // namespace
}  // namespace kvframe::runtime
