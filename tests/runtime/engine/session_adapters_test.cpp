// LoRA adapters per session (SessionParams::adapter): a session answers as
// an engine that loaded only its adapter; adapters that change only the
// query share the base model's block KV, one that changes every token does
// not; sessions of different adapters answered together are grouped.
#include <gtest/gtest.h>

#include "engine_test_util.h"
#include "frame_edits.h"

namespace kvframe::runtime {
namespace {

using namespace engine_test;  // tiny_engine, session_params, open, task, ask (engine_test_util.h)

// An adapter that changes the model's answers (a fresh one starts as the base model: B is zero).
std::shared_ptr<LoraAdapter> random_adapter(const Engine& engine, LoraScope scope, uint64_t seed) {
  LoraParams params;
  params.rank = 4;
  params.alpha = 8;
  params.scope = scope;
  auto adapter = LoraAdapter::create(engine.model().config(), params, engine.model().device(), seed).value();
  at::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.05);
  return adapter;
}

SessionParams with_adapter(AttentionMode mode, std::shared_ptr<LoraAdapter> adapter) {
  SessionParams params = session_params(mode);
  params.adapter = std::move(adapter);
  return params;
}

class SessionAdapters : public ::testing::TestWithParam<LoraScope> {};

// Two sessions of different adapters on one engine, frames changing between
// their queries, each against an engine whose default is only its adapter.
TEST_P(SessionAdapters, ASessionAnswersAsAnEngineThatLoadedOnlyItsAdapter) {
  auto shared = tiny_engine();
  const auto first = random_adapter(*shared, GetParam(), 11), second = random_adapter(*shared, GetParam(), 12);
  auto only_first = tiny_engine(), only_second = tiny_engine();
  ASSERT_TRUE(only_first->set_adapter(first).ok());
  ASSERT_TRUE(only_second->set_adapter(second).ok());
  auto a = open(*shared, with_adapter(AttentionMode::kBlock, first));
  auto b = open(*shared, with_adapter(AttentionMode::kBlock, second));
  auto base = open(*shared, with_adapter(AttentionMode::kBlock, nullptr));
  auto want_a = open(*only_first, session_params(AttentionMode::kBlock));
  auto want_b = open(*only_second, session_params(AttentionMode::kBlock));
  test::FrameEdits frames(21);
  for (int round = 0; round < 4; ++round) {
    frames.edit();
    const Answer got_a = ask(*a, frames.json(), task(4)), got_b = ask(*b, frames.json(), task(4));
    const Answer got_base = ask(*base, frames.json(), task(4));
    const Answer ref_a = ask(*want_a, frames.json(), task(4)), ref_b = ask(*want_b, frames.json(), task(4));
    EXPECT_LE(relative_error(got_a.first_logits, ref_a.first_logits), kRelativeTolerance) << "round " << round;
    EXPECT_LE(relative_error(got_b.first_logits, ref_b.first_logits), kRelativeTolerance) << "round " << round;
    EXPECT_EQ(got_a.tokens, ref_a.tokens);
    EXPECT_EQ(got_b.tokens, ref_b.tokens);
    EXPECT_GT((got_a.first_logits - got_base.first_logits).abs().max().item<double>(), 1e-3)
        << "the adapter must change the answer";
  }
  EXPECT_EQ(shared->model().adapter(), shared->default_adapter()) << "outside a session's calls: the default";
}

INSTANTIATE_TEST_SUITE_P(Scopes, SessionAdapters, ::testing::Values(LoraScope::kQuery, LoraScope::kAll),
                         [](const ::testing::TestParamInfo<LoraScope>& scope) {
                           return std::string(lora_scope_name(scope.param));
                         });

// A game gives every NPC character an adapter of its own and encodes the
// world once: sessions whose adapters change only the query read the blocks
// another such session encoded; an adapter that changes every token cannot.
TEST(SessionAdapterBlocks, QueryScopeAdaptersShareTheBaseModelsBlockKv) {
  auto engine = tiny_engine();
  test::FrameEdits frames(5);
  auto first = open(*engine, with_adapter(AttentionMode::kBlock, random_adapter(*engine, LoraScope::kQuery, 1)));
  const Answer encoded = ask(*first, frames.json());
  EXPECT_EQ(encoded.report.cache_hits, 0);

  auto second = open(*engine, with_adapter(AttentionMode::kBlock, random_adapter(*engine, LoraScope::kQuery, 2)));
  const Answer shared = ask(*second, frames.json());
  EXPECT_EQ(shared.report.cache_hits, shared.report.blocks_total);
  EXPECT_EQ(shared.report.blocks_encoded, 0);

  auto base = open(*engine, with_adapter(AttentionMode::kBlock, nullptr));
  EXPECT_EQ(ask(*base, frames.json()).report.cache_hits, shared.report.blocks_total);

  auto own = open(*engine, with_adapter(AttentionMode::kBlock, random_adapter(*engine, LoraScope::kAll, 3)));
  const Answer apart = ask(*own, frames.json());
  EXPECT_EQ(apart.report.cache_hits, 0);
  EXPECT_EQ(apart.report.blocks_encoded, apart.report.blocks_total);
}

TEST(SessionAdapterBlocks, AnAdapterOfAnotherShapeIsRefusedAtOpen) {
  auto engine = tiny_engine(int64_t{1} << 30, 2), deeper = tiny_engine(int64_t{1} << 30, 3);
  auto opened = Session::open(*engine, with_adapter(AttentionMode::kBlock, random_adapter(*deeper, LoraScope::kQuery, 4)));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, ErrorCode::kInvalidArgument);
}

// query_together over sessions of three adapters (two of them the same):
// each answer is what the session's query() gives alone.
TEST(SessionAdapterBlocks, SessionsOfDifferentAdaptersAnsweredTogetherAnswerAsAlone) {
  auto engine = tiny_engine(), alone_engine = tiny_engine();
  const auto q = random_adapter(*engine, LoraScope::kQuery, 7), all = random_adapter(*engine, LoraScope::kAll, 8);
  const std::vector<std::shared_ptr<LoraAdapter>> adapters = {q, all, q, nullptr};
  std::vector<std::unique_ptr<Session>> together, alone;
  std::vector<Session::SessionTask> tasks;
  test::FrameEdits frames(9);
  for (size_t i = 0; i < adapters.size(); ++i) {
    together.push_back(open(*engine, with_adapter(AttentionMode::kBlock, adapters[i])));
    alone.push_back(open(*alone_engine, with_adapter(AttentionMode::kBlock, adapters[i])));
    ASSERT_TRUE(together[i]->update(frames.json()));
    tasks.push_back({together[i].get(), task(3), {}});
  }
  std::vector<size_t> handed;
  for (size_t i = 0; i < tasks.size(); ++i) tasks[i].on_answer = [&handed, i](Result<Answer>&) { handed.push_back(i); };
  const auto answers = Session::query_together(tasks);
  ASSERT_EQ(answers.size(), adapters.size());
  EXPECT_EQ(handed.size(), adapters.size()) << "every answer handed over once";
  for (size_t i = 0; i < adapters.size(); ++i) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].error().to_string();
    const Answer want = ask(*alone[i], frames.json(), task(3));
    EXPECT_EQ(answers[i]->tokens, want.tokens) << "session " << i;
    EXPECT_LE(relative_error(answers[i]->first_logits, want.first_logits), kRelativeTolerance) << "session " << i;
  }
}

}  // namespace
}  // namespace kvframe::runtime
