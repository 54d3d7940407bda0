// Tasks on the engine (tiny random-weight models, fp32, CPU): output schemas
// hold, stop strings cut, streaming hands on the text in order, and NPC
// queries batched on one frame answer exactly as they do alone.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "engine_test_util.h"
#include "frame_edits.h"

namespace kvframe::runtime {
namespace {

using namespace engine_test;  // tiny_engine, session_params, open, task, ask

constexpr const char* kActionSchema =
    R"({"type":"object","properties":{"action":{"type":"string","enum":["fold","call","raise"]},)"
    R"("amount":{"type":"integer","minimum":40,"maximum":1960}},"required":["action","amount"]})";

// Different NPCs asking about one frame: instructions, lengths and limits differ.
std::vector<Task> npc_tasks() {
  std::vector<Task> tasks;
  const char* who[] = {"u1", "u2", "u3", "u10", "u4"};
  for (int i = 0; i < 5; ++i) {
    Task t = task(3 + 4 * i);
    t.instruction = std::string("\nYou are ") + who[i] + ". What do you do" + std::string(static_cast<size_t>(i), '?') + "\n";
    tasks.push_back(t);
  }
  tasks[1].output_schema = kActionSchema;
  tasks[1].generate.max_tokens = 40;
  tasks[3].generate.stop_strings = {"\n"};
  return tasks;
}

class Batched : public ::testing::TestWithParam<AttentionMode> {};

// The default tiny model, whose tasks run as branches of the frame's KV, and
// Gemma 3's shape, whose branches window its local layers as forward() does.
void expect_batched_equals_alone(std::unique_ptr<Engine> engine, AttentionMode mode) {
  const SessionParams params = session_params(mode);
  auto batched = open(*engine, params), alone = open(*engine, params);
  kvframe::test::FrameEdits frames(21);
  const std::vector<Task> tasks = npc_tasks();
  for (int frame = 0; frame < 6; ++frame) {
    frames.edit();
    ASSERT_TRUE(batched->update(frames.json()).ok());
    ASSERT_TRUE(alone->update(frames.json()).ok());
    auto answers = batched->query_batch(tasks);
    ASSERT_EQ(answers.size(), tasks.size());
    for (size_t i = 0; i < tasks.size(); ++i) {
      SCOPED_TRACE("frame " + std::to_string(frame) + ", task " + std::to_string(i));
      auto single = alone->query(tasks[i]);
      ASSERT_TRUE(single.ok()) << single.error().to_string();
      ASSERT_TRUE(answers[i].ok()) << answers[i].error().to_string();
      EXPECT_EQ(answers[i]->tokens, single->tokens);
      EXPECT_EQ(answers[i]->text, single->text);
      EXPECT_EQ(answers[i]->stop, single->stop);
      EXPECT_LE(engine_test::relative_error(answers[i]->first_logits, single->first_logits), kRelativeTolerance);
      EXPECT_EQ(answers[i]->report.query_tokens, single->report.query_tokens);
    }
    EXPECT_EQ(answers[1]->stop, StopReason::kComplete);
  }
}

TEST_P(Batched, AnswersEqualTheSameTasksRunAloneOverManyFrames) { expect_batched_equals_alone(tiny_engine(), GetParam()); }

TEST_P(Batched, WindowedModelsAnswerAsAloneToo) {
  kvframe::test::TinyModelSpec gemma3;
  gemma3.arch = "gemma3", gemma3.n_head_kv = 1, gemma3.rope_base = 1000000.0f, gemma3.sliding_window = 16;
  expect_batched_equals_alone(tiny_engine_of(gemma3), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Modes, Batched,
                         ::testing::Values(AttentionMode::kBlock, AttentionMode::kFull, AttentionMode::kPrefix),
                         [](const auto& mode) { return std::string(attention_mode_name(mode.param)); });

TEST(Batched, OneBadTaskFailsAloneAndTheRestAreAnswered) {
  auto engine = tiny_engine();
  auto session = open(*engine, session_params(AttentionMode::kBlock));
  kvframe::test::FrameEdits frames(3);
  ASSERT_TRUE(session->update(frames.json()).ok());
  std::vector<Task> tasks = npc_tasks();
  tasks[0].output_schema = R"json({"type":"object","properties":{"x":{"type":"string","pattern":"(?=a)"}}})json";
  tasks[2].output_schema = R"({"type":"string","minLength":500})";
  tasks[2].generate.max_tokens = 20;
  auto answers = session->query_batch(tasks);
  ASSERT_EQ(answers.size(), tasks.size());
  ASSERT_FALSE(answers[0].ok());
  EXPECT_EQ(answers[0].error().code, ErrorCode::kSchemaUnsupported);
  EXPECT_NE(answers[0].error().message.find("pattern"), std::string::npos) << answers[0].error().message;
  ASSERT_FALSE(answers[2].ok());
  EXPECT_EQ(answers[2].error().code, ErrorCode::kUnsatisfiable);
  for (size_t i : {size_t{1}, size_t{3}, size_t{4}}) EXPECT_TRUE(answers[i].ok()) << i;
}

TEST(Schema, ActionsParseAndMeetTheSchemaOnEveryFrame) {
  auto engine = tiny_engine();
  auto session = open(*engine, session_params(AttentionMode::kBlock));
  kvframe::test::FrameEdits frames(8);
  Task t = task(40);
  t.output_schema = kActionSchema;
  t.generate.sampling.temperature = 1.0f;  // random weights sample widely: the mask must hold anyway
  for (int i = 0; i < 20; ++i) {
    frames.edit();
    t.generate.sampling.seed = static_cast<uint64_t>(i);
    const Answer a = ask(*session, frames.json(), t);
    EXPECT_EQ(a.stop, StopReason::kComplete);
    const auto action = nlohmann::json::parse(a.text, nullptr, false);
    ASSERT_TRUE(action.is_object()) << a.text;
    const std::string what = action.at("action").get<std::string>();
    EXPECT_TRUE(what == "fold" || what == "call" || what == "raise") << a.text;
    const int64_t amount = action.at("amount").get<int64_t>();
    EXPECT_GE(amount, 40);
    EXPECT_LE(amount, 1960);
    EXPECT_GT(a.report.ms.mask, 0);
  }
}

TEST(Schema, UnsatisfiableWithinMaxTokensIsAnErrorAndRunsNothing) {
  auto engine = tiny_engine();
  auto session = open(*engine, session_params(AttentionMode::kBlock));
  ASSERT_TRUE(session->update(R"({"units":[{"id":"u1","hp":10}]})").ok());
  Task t = task(8);
  t.output_schema = kActionSchema;  // the shortest action is longer than 8 one-byte tokens
  auto answer = session->query(t);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code, ErrorCode::kUnsatisfiable);
  EXPECT_NE(answer.error().message.find("max_tokens"), std::string::npos);
  EXPECT_EQ(engine->store().stats().misses, 0);  // nothing was encoded
}

TEST(Streaming, ChunksArriveInOrderAndMakeUpTheText) {
  auto engine = tiny_engine();
  auto session = open(*engine, session_params(AttentionMode::kBlock));
  kvframe::test::FrameEdits frames(4);
  Task t = task(48);
  std::vector<TextChunk> chunks;
  t.on_chunk = [&](const TextChunk& c) { chunks.push_back(c); };
  const Answer a = ask(*session, frames.json(), t);
  std::string joined;
  for (const TextChunk& c : chunks) {
    EXPECT_FALSE(c.text.empty());
    joined += c.text;
  }
  EXPECT_EQ(joined, a.text);
  ASSERT_FALSE(chunks.empty());
  EXPECT_GT(a.report.ms.first_chunk, 0);
  // Held-back text is flushed just after decoding ends: the first chunk may be that flush.
  EXPECT_LE(a.report.ms.first_chunk, a.report.ms.total + 1.0);
}

TEST(Streaming, AStopStringCutsTheTextAndIsNeverStreamed) {
  auto engine = tiny_engine();
  auto session = open(*engine, session_params(AttentionMode::kBlock));
  kvframe::test::FrameEdits frames(6);
  const std::string frame = frames.json();
  const Answer free = ask(*session, frame, task(40));
  ASSERT_GE(free.text.size(), 12u);
  const std::string stop = free.text.substr(6, 3);
  const size_t cut = free.text.find(stop);
  Task t = task(40);
  t.generate.stop_strings = {stop};
  std::string streamed;
  t.on_chunk = [&](const TextChunk& c) { streamed += c.text; };
  const Answer a = ask(*session, frame, t);
  EXPECT_EQ(a.stop, StopReason::kStopString);
  EXPECT_EQ(a.text, free.text.substr(0, cut));
  EXPECT_EQ(streamed, a.text);
}

}  // namespace
}  // namespace kvframe::runtime
