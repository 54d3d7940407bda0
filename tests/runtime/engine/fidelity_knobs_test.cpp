// Block mode's fidelity knobs (SessionParams::block_heads, blend_ratio,
// block_temperature) on tiny random-weight models (fp32, CPU; Llama and
// Qwen2): at their "recompute everything" end they are full attention, and
// reusing a session's buffer with a knob on gives the logits of recomputing
// the frame with the same knob.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

#include "engine_test_util.h"
#include "frame_edits.h"

namespace kvframe::runtime {
namespace {

using namespace engine_test;  // tiny_engine, session_params, open, task, ask (engine_test_util.h)

// Every block token re-encoded in context is a causal pass over prefix and
// blocks: full attention, frame after frame, in both layouts.
TEST(BlockHeads, EveryTokenReencodedIsFullAttention) {
  for (const kv_diff::Layout layout : {kv_diff::Layout::kSlack, kv_diff::Layout::kCompact}) {
    // The second architecture (Qwen2) with the compact layout.
    auto engine = layout == kv_diff::Layout::kSlack ? tiny_engine() : tiny_engine_of(qwen2_spec(2));
    SessionParams block_params = session_params(AttentionMode::kBlock);
    block_params.layout = layout;
    block_params.block_heads = 1 << 20;
    SessionParams full_params = session_params(AttentionMode::kFull);
    auto block = open(*engine, block_params);
    auto full = open(*engine, full_params);
    test::FrameEdits frames(11);
    for (int i = 0; i < 12; ++i) {
      const char* kind = frames.edit();
      const Answer a = ask(*block, frames.json()), b = ask(*full, frames.json());
      ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance)
          << kv_diff::layout_name(layout) << ", frame " << i << " after a '" << kind << "' edit";
    }
  }
}

// Heads of a few tokens, kept across frames where nothing before them
// changed: the logits of a session that re-encodes every head afresh.
TEST(BlockHeads, ReuseGivesTheLogitsOfRecomputation) {
  for (const kv_diff::Layout layout : {kv_diff::Layout::kSlack, kv_diff::Layout::kCompact}) {
    auto engine = tiny_engine(), fresh = tiny_engine();
    SessionParams params = session_params(AttentionMode::kBlock);
    params.layout = layout;
    params.block_heads = 3;
    auto session = open(*engine, params);
    test::FrameEdits frames(12);
    int64_t heads_kept = 0;
    for (int i = 0; i < 40; ++i) {
      const char* kind = frames.edit();
      const Answer cached = ask(*session, frames.json());
      fresh->store().clear();
      auto scratch_session = open(*fresh, params);
      const Answer scratch = ask(*scratch_session, frames.json());
      ASSERT_LE(relative_error(cached.first_logits, scratch.first_logits), kRelativeTolerance)
          << kv_diff::layout_name(layout) << ", frame " << i << " after a '" << kind << "' edit";
      // Re-encoded head tokens are counted as encoded: fewer than afresh when some were kept.
      heads_kept += scratch.report.tokens_encoded - cached.report.tokens_encoded;
    }
    EXPECT_GT(heads_kept, 0) << kv_diff::layout_name(layout);
  }
}

// A few heads change the answer, and cost their tokens: two per block here.
TEST(BlockHeads, ChangeTheAnswerAndCountTheirTokens) {
  auto engine = tiny_engine(), other = tiny_engine();  // two stores: both sessions encode every block
  test::FrameEdits frames(13);
  frames.edit();
  SessionParams params = session_params(AttentionMode::kBlock);
  auto plain = open(*engine, params);
  params.block_heads = 2;
  auto headed = open(*other, params);
  const Answer a = ask(*plain, frames.json()), b = ask(*headed, frames.json());
  EXPECT_GT(relative_error(b.first_logits, a.first_logits), kRelativeTolerance);
  EXPECT_EQ(b.report.tokens_encoded - a.report.tokens_encoded, 2 * b.report.blocks_total);
}

// Blending needs layers past the one it selects at: 4 here, in both
// architectures the runtime runs.
std::unique_ptr<Engine> blend_engine(bool qwen2 = false) {
  test::TinyModelSpec llama;
  llama.n_layer = 4;
  return tiny_engine_of(qwen2 ? qwen2_spec(4) : llama);
}

// Every token selected runs every layer in context: full attention.
TEST(BlendRatio, EveryTokenSelectedIsFullAttention) {
  for (const bool qwen2 : {false, true}) {
    const kv_diff::Layout layout = qwen2 ? kv_diff::Layout::kCompact : kv_diff::Layout::kSlack;
    auto engine = blend_engine(qwen2);
    SessionParams block_params = session_params(AttentionMode::kBlock);
    block_params.layout = layout;
    block_params.blend_ratio = 1;
    auto block = open(*engine, block_params);
    auto full = open(*engine, session_params(AttentionMode::kFull));
    test::FrameEdits frames(21);
    for (int i = 0; i < 12; ++i) {
      const char* kind = frames.edit();
      const Answer a = ask(*block, frames.json()), b = ask(*full, frames.json());
      ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance)
          << (qwen2 ? "qwen2, " : "llama, ") << kv_diff::layout_name(layout) << ", frame " << i << " after a '"
          << kind << "' edit";
    }
  }
}

// A share of each block (and its heads) selected by how far the context
// moved its values, kept across frames where nothing before it changed:
// the logits of a session that blends the whole frame afresh.
TEST(BlendRatio, ReuseGivesTheLogitsOfRecomputation) {
  for (const bool qwen2 : {false, true}) {
    const kv_diff::Layout layout = qwen2 ? kv_diff::Layout::kCompact : kv_diff::Layout::kSlack;
    auto engine = blend_engine(qwen2), fresh = blend_engine(qwen2);
    SessionParams params = session_params(AttentionMode::kBlock);
    params.layout = layout;
    params.blend_ratio = 0.3f;
    params.block_heads = 1;
    auto session = open(*engine, params);
    test::FrameEdits frames(22);
    int64_t tokens_kept = 0;
    for (int i = 0; i < 40; ++i) {
      const char* kind = frames.edit();
      const Answer cached = ask(*session, frames.json());
      fresh->store().clear();
      auto scratch_session = open(*fresh, params);
      const Answer scratch = ask(*scratch_session, frames.json());
      ASSERT_LE(relative_error(cached.first_logits, scratch.first_logits), kRelativeTolerance)
          << (qwen2 ? "qwen2, " : "llama, ") << kv_diff::layout_name(layout) << ", frame " << i << " after a '"
          << kind << "' edit";
      tokens_kept += scratch.report.tokens_encoded - cached.report.tokens_encoded;
    }
    EXPECT_GT(tokens_kept, 0) << kv_diff::layout_name(layout);
  }
}

// A partial blend changes the answer, and costs its selected tokens and
// the others' first layers: more than its share, less than every token.
TEST(BlendRatio, ChangesTheAnswerAndCountsItsTokens) {
  test::FrameEdits frames(23);
  frames.edit();
  auto ask_with = [&](float ratio) {
    auto engine = blend_engine();  // its own store: every block encoded
    SessionParams params = session_params(AttentionMode::kBlock);
    params.blend_ratio = ratio;
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
  auto engine = tiny_engine();
  SessionParams block_params = session_params(AttentionMode::kBlock);
  block_params.block_temperature = 0.5f;
  block_params.block_heads = 1 << 20;
  auto block = open(*engine, block_params);
  auto full = open(*engine, session_params(AttentionMode::kFull));
  test::FrameEdits frames(31);
  for (int i = 0; i < 8; ++i) {
    const char* kind = frames.edit();
    const Answer a = ask(*block, frames.json()), b = ask(*full, frames.json());
    ASSERT_LE(relative_error(a.first_logits, b.first_logits), kRelativeTolerance)
        << "frame " << i << " after a '" << kind << "' edit";
  }
}

// Tempered blocks kept across frames answer as a session that tempers the
// whole frame afresh, and sessions of another temperature never reuse them.
TEST(BlockTemperature, ReuseGivesTheLogitsOfRecomputationAndTemperaturesDoNotMix) {
  auto engine = tiny_engine(), fresh = tiny_engine();
  SessionParams params = session_params(AttentionMode::kBlock);
  params.block_temperature = 0.7f;
  auto session = open(*engine, params);
  test::FrameEdits frames(32);
  for (int i = 0; i < 20; ++i) {
    const char* kind = frames.edit();
    const Answer cached = ask(*session, frames.json());
    fresh->store().clear();
    auto scratch_session = open(*fresh, params);
    const Answer scratch = ask(*scratch_session, frames.json());
    ASSERT_LE(relative_error(cached.first_logits, scratch.first_logits), kRelativeTolerance)
        << "frame " << i << " after a '" << kind << "' edit";
  }
  SessionParams plain_params = session_params(AttentionMode::kBlock);
  auto plain = open(*engine, plain_params);  // the same store, no temperature
  const Answer untempered = ask(*plain, frames.json());
  EXPECT_EQ(untempered.report.cache_hits, 0);
  const Answer tempered = ask(*session, frames.json());
  EXPECT_GT(relative_error(tempered.first_logits, untempered.first_logits), kRelativeTolerance);
}

TEST(FidelityKnobs, OutOfRangeSettingsAreRefused) {
  auto engine = tiny_engine();
  auto refused = [&](auto set) {
    SessionParams params = session_params(AttentionMode::kBlock);
    set(params);
    auto session = Session::open(*engine, params);
    return !session.ok() && session.error().code == ErrorCode::kInvalidArgument;
  };
  for (const float bad : {-0.1f, 1.5f, std::nanf("")}) {
    EXPECT_TRUE(refused([&](SessionParams& p) { p.blend_ratio = bad; })) << "blend_ratio " << bad;
  }
  for (const float bad : {0.0f, 0.2f, 5.0f, std::nanf("")}) {
    EXPECT_TRUE(refused([&](SessionParams& p) { p.block_temperature = bad; })) << "block_temperature " << bad;
  }
  EXPECT_TRUE(refused([](SessionParams& p) { p.block_heads = -1; }));
}

}  // namespace
}  // namespace kvframe::runtime
