// Block mode's fidelity knobs (BlockFidelity::block_heads, blend_ratio,
// block_temperature) on tiny random-weight models (fp32, CPU; Llama and
// Qwen2): at their "recompute everything" end they are full attention, and
// reusing a session's buffer with a knob on gives the logits of recomputing
// the frame with the same knob.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <string>

#include "engine_test_util.h"
#include "frame_edits.h"

namespace kvframe::runtime {
namespace {

using namespace engine_test;  // tiny_engine, session_params, open, task, ask (engine_test_util.h)

using EngineMaker = std::function<std::unique_ptr<Engine>()>;

// Blending needs layers past the one it selects at: 4 here.
std::unique_ptr<Engine> llama4() { return tiny_engine(int64_t{1} << 30, 4); }
std::unique_ptr<Engine> qwen4() { return tiny_engine_of(qwen2_spec(4)); }
std::unique_ptr<Engine> qwen2() { return tiny_engine_of(qwen2_spec(2)); }
std::unique_ptr<Engine> llama2() { return tiny_engine(); }
// Gemma 3's shape, 4 layers (local, global, local, global) at a window of 16.
std::unique_ptr<Engine> gemma4() {
  kvframe::test::TinyModelSpec gemma3;
  gemma3.arch = "gemma3", gemma3.n_layer = 4, gemma3.n_head_kv = 1, gemma3.rope_base = 1000000.0f;
  gemma3.sliding_window = 16;
  return tiny_engine_of(gemma3);
}

SessionParams block_session(kv_diff::Layout layout) {
  SessionParams params = session_params(AttentionMode::kBlock);
  params.layout = layout;
  return params;
}

// `frames` edited frames answered by a block session with `params` and a
// full one on the same engine: the same logits, frame after frame.
void expect_full_attention(const EngineMaker& make, const SessionParams& params, uint32_t seed, int frames,
                           const std::string& what) {
  auto engine = make();
  auto block = open(*engine, params);
  auto full = open(*engine, session_params(AttentionMode::kFull));
  test::FrameEdits edits(seed);
  for (int i = 0; i < frames; ++i) {
    const char* kind = edits.edit();
    const Answer a = ask(*block, edits.json()), b = ask(*full, edits.json());
    ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance)
        << what << ", frame " << i << " after a '" << kind << "' edit";
  }
}

// A session kept across `frames` edited frames against a fresh one (its own
// engine and store) per frame, both with `params`: the same logits. Returns
// the tokens the kept session did not run again (afresh minus kept).
int64_t expect_reuse_equals_recomputation(const EngineMaker& make, const SessionParams& params, uint32_t seed,
                                          int frames, const std::string& what) {
  auto engine = make(), fresh = make();
  auto session = open(*engine, params);
  test::FrameEdits edits(seed);
  int64_t kept = 0;
  for (int i = 0; i < frames; ++i) {
    const char* kind = edits.edit();
    const Answer cached = ask(*session, edits.json());
    fresh->store().clear();
    auto scratch_session = open(*fresh, params);
    const Answer scratch = ask(*scratch_session, edits.json());
    EXPECT_LE(relative_error(cached.first_logits, scratch.first_logits), kRelativeTolerance)
        << what << ", frame " << i << " after a '" << kind << "' edit";
    if (::testing::Test::HasFailure()) return kept;
    kept += scratch.report.tokens_encoded - cached.report.tokens_encoded;
  }
  return kept;
}

// Every block token re-encoded in context is a causal pass over prefix and
// blocks: full attention, in both layouts and both architectures.
TEST(BlockHeads, EveryTokenReencodedIsFullAttention) {
  SessionParams params = block_session(kv_diff::Layout::kSlack);
  params.fidelity.block_heads = 1 << 20;
  expect_full_attention(llama2, params, 11, 12, "llama, slack");
  params.layout = kv_diff::Layout::kCompact;
  expect_full_attention(qwen2, params, 11, 12, "qwen2, compact");
  expect_full_attention(gemma4, params, 11, 12, "gemma3 windows, compact");
}

// Heads of a few tokens, kept across frames where nothing before them
// changed: the logits of a session that re-encodes every head afresh.
TEST(BlockHeads, ReuseGivesTheLogitsOfRecomputation) {
  for (const kv_diff::Layout layout : {kv_diff::Layout::kSlack, kv_diff::Layout::kCompact}) {
    SessionParams params = block_session(layout);
    params.fidelity.block_heads = 3;
    // Re-encoded head tokens are counted as encoded: fewer than afresh when some were kept.
    EXPECT_GT(expect_reuse_equals_recomputation(llama2, params, 12, 40, kv_diff::layout_name(layout)), 0);
  }
}

// A few heads change the answer, and cost their tokens: two per block here.
TEST(BlockHeads, ChangeTheAnswerAndCountTheirTokens) {
  auto engine = tiny_engine(), other = tiny_engine();  // two stores: both sessions encode every block
  test::FrameEdits frames(13);
  frames.edit();
  SessionParams params = session_params(AttentionMode::kBlock);
  auto plain = open(*engine, params);
  params.fidelity.block_heads = 2;
  auto headed = open(*other, params);
  const Answer a = ask(*plain, frames.json()), b = ask(*headed, frames.json());
  EXPECT_GT(relative_error(b.first_logits, a.first_logits), kRelativeTolerance);
  EXPECT_EQ(b.report.tokens_encoded - a.report.tokens_encoded, 2 * b.report.blocks_total);
}

// Every token selected runs every layer in context: full attention.
TEST(BlendRatio, EveryTokenSelectedIsFullAttention) {
  SessionParams params = block_session(kv_diff::Layout::kSlack);
  params.fidelity.blend_ratio = 1;
  expect_full_attention(llama4, params, 21, 12, "llama, slack");
  params.layout = kv_diff::Layout::kCompact;
  expect_full_attention(qwen4, params, 21, 12, "qwen2, compact");
  expect_full_attention(gemma4, params, 21, 12, "gemma3 windows, compact");
}

// A share of each block (and its heads) selected by how far the context
// moved its values, kept across frames where nothing before it changed:
// the logits of a session that blends the whole frame afresh.
TEST(BlendRatio, ReuseGivesTheLogitsOfRecomputation) {
  SessionParams params = block_session(kv_diff::Layout::kSlack);
  params.fidelity.blend_ratio = 0.3f;
  params.fidelity.block_heads = 1;
  EXPECT_GT(expect_reuse_equals_recomputation(llama4, params, 22, 40, "llama, slack"), 0);
  params.layout = kv_diff::Layout::kCompact;
  EXPECT_GT(expect_reuse_equals_recomputation(qwen4, params, 22, 40, "qwen2, compact"), 0);
}

// A partial blend changes the answer, and costs its selected tokens and
// the others' first layers: more than its share, less than every token.
TEST(BlendRatio, ChangesTheAnswerAndCountsItsTokens) {
  test::FrameEdits frames(23);
  frames.edit();
  auto ask_with = [&](float ratio) {
    auto engine = llama4();  // its own store: every block encoded
    SessionParams params = session_params(AttentionMode::kBlock);
    params.fidelity.blend_ratio = ratio;
    auto session = open(*engine, params);
    return ask(*session, frames.json());
  };
  const Answer plain = ask_with(0), part = ask_with(0.25f), all = ask_with(1);
  EXPECT_GT(relative_error(part.first_logits, plain.first_logits), kRelativeTolerance);
  const int64_t part_cost = part.report.tokens_encoded - plain.report.tokens_encoded;
  const int64_t all_cost = all.report.tokens_encoded - plain.report.tokens_encoded;
  EXPECT_GT(part_cost, all_cost / 4);
  EXPECT_LT(part_cost, all_cost);
}

// A tempered frame re-encoded in every token is still full attention: the
// tokens recomputed in context keep their own keys.
TEST(BlockTemperature, EveryTokenReencodedIsStillFullAttention) {
  SessionParams params = block_session(kv_diff::Layout::kSlack);
  params.fidelity.block_temperature = 0.5f;
  params.fidelity.block_heads = 1 << 20;
  expect_full_attention(llama2, params, 31, 8, "llama, slack");
}

// Tempered blocks kept across frames answer as a session that tempers the
// whole frame afresh, and sessions of another temperature never reuse them.
TEST(BlockTemperature, ReuseGivesTheLogitsOfRecomputationAndTemperaturesDoNotMix) {
  SessionParams params = block_session(kv_diff::Layout::kCompact);
  params.fidelity.block_temperature = 0.7f;
  expect_reuse_equals_recomputation(llama2, params, 32, 20, "compact");

  auto engine = tiny_engine();
  test::FrameEdits frames(33);
  frames.edit();
  auto tempered = open(*engine, params);
  const Answer a = ask(*tempered, frames.json());
  auto plain = open(*engine, session_params(AttentionMode::kBlock));  // the same store, no temperature
  const Answer b = ask(*plain, frames.json());
  EXPECT_EQ(b.report.cache_hits, 0);
  EXPECT_GT(relative_error(a.first_logits, b.first_logits), kRelativeTolerance);
}

TEST(FidelityKnobs, OutOfRangeSettingsAreRefused) {
  auto engine = tiny_engine();
  auto refused = [&](const std::function<void(SessionParams&)>& set) {
    SessionParams params = session_params(AttentionMode::kBlock);
    set(params);
    auto session = Session::open(*engine, params);
    return !session.ok() && session.error().code == ErrorCode::kInvalidArgument;
  };
  for (const float bad : {-0.1f, 1.5f, std::nanf("")}) {
    EXPECT_TRUE(refused([&](SessionParams& p) { p.fidelity.blend_ratio = bad; })) << "blend_ratio " << bad;
  }
  for (const float bad : {0.0f, 0.2f, 5.0f, std::nanf("")}) {
    EXPECT_TRUE(refused([&](SessionParams& p) { p.fidelity.block_temperature = bad; })) << "block_temperature " << bad;
  }
  EXPECT_TRUE(refused([](SessionParams& p) { p.fidelity.block_heads = -1; }));
}

}  // namespace
}  // namespace kvframe::runtime
