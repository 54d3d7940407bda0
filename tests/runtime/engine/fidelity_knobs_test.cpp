// Block mode's fidelity knobs (SessionParams::block_heads) on tiny
// random-weight models (fp32, CPU): at their "recompute everything" end they
// are full attention, and reusing a session's buffer with a knob on gives the
// logits of recomputing the frame with the same knob.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "engine_test_util.h"
#include "frame_edits.h"

namespace kvframe::runtime {
namespace {

using namespace engine_test;  // tiny_engine, session_params, open, task, ask (engine_test_util.h)

// Every block token re-encoded in context is a causal pass over prefix and
// blocks: full attention, frame after frame, in both layouts.
TEST(BlockHeads, EveryTokenReencodedIsFullAttention) {
  for (const kv_diff::Layout layout : {kv_diff::Layout::kSlack, kv_diff::Layout::kCompact}) {
    auto engine = tiny_engine();
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

}  // namespace
}  // namespace kvframe::runtime
