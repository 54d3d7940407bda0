// EngineBackend on a tiny random-weight model (fp32, CPU): the protocol's
// view of frames and queries, and the engine's errors as protocol codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "kvframe/server/engine_backend.h"
#include "tiny_model.h"

namespace kvframe::server {
namespace {

constexpr char kState[] = R"({"turn":1,"players":[{"id":"p1","chips":950},{"id":"p2","chips":1000}],"pot":50})";

// One file per process: ctest runs each test in its own process, in parallel,
// and rewriting a file another process has mapped kills that one with SIGBUS.
std::string tiny_model_path() {
  return (std::filesystem::temp_directory_path() /
          ("kvframe-server-tiny-" + std::to_string(::getpid()) + ".gguf"))
      .string();
}

std::string write_tiny_model() {
  const std::vector<uint8_t> bytes = test::tiny_model_bytes({});
  const std::string path = tiny_model_path();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  return path;
}

class EngineBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto loaded = runtime::Engine::load(write_tiny_model());
    ASSERT_TRUE(loaded) << loaded.error().to_string();
    EXPECT_FALSE((*loaded)->chat_template()) << "the tiny model has none: served with raw prompts";
    backend_ = new EngineBackend(std::move(loaded).value());
  }
  static void TearDownTestSuite() {
    delete backend_;
    std::filesystem::remove(tiny_model_path());
  }

  static SessionConfig config(fb::AttentionMode mode, uint32_t context = 512) {
    SessionConfig c;
    c.mode = mode;
    c.rules.min_split_bytes = 0;  // several blocks from a small state
    c.context_tokens = context;
    return c;
  }
  static QuerySpec spec(uint32_t max_tokens = 3) {
    QuerySpec q;
    q.instruction = "\nWhat does p2 do?\n";
    q.max_tokens = max_tokens;
    return q;
  }

  static EngineBackend* backend_;
};
EngineBackend* EngineBackendTest::backend_ = nullptr;

TEST_F(EngineBackendTest, InfoNamesTheModelAndItsContext) {
  EXPECT_FALSE(backend_->info().model.empty());
  EXPECT_EQ(backend_->info().max_context, 512u);
}

TEST_F(EngineBackendTest, FramesReportTheirDiffAndQueriesTheirReport) {
  for (fb::AttentionMode mode : {fb::AttentionMode::Full, fb::AttentionMode::Prefix, fb::AttentionMode::Block}) {
    SCOPED_TRACE(fb::EnumNameAttentionMode(mode));
    ASSERT_TRUE(backend_->open_session(1, config(mode)).ok());
    auto first = backend_->apply_frame(1, fb::FrameFormat::Whole, kState);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_GT(first->blocks_total, 1u);
    EXPECT_EQ(first->blocks_changed, first->blocks_total) << "every block is new";
    auto patched = backend_->apply_frame(1, fb::FrameFormat::MergePatch, R"({"pot":75})");
    ASSERT_TRUE(patched) << patched.error().message;
    EXPECT_EQ(patched->blocks_total, first->blocks_total);
    EXPECT_LT(patched->blocks_changed, patched->blocks_total);

    std::string streamed;
    auto answer = backend_->run_query(1, spec(), [&](std::string_view text, bool) { streamed += text; });
    ASSERT_TRUE(answer) << answer.error().message;
    EXPECT_EQ(answer->text, streamed);
    EXPECT_EQ(answer->blocks_total, first->blocks_total);
    EXPECT_GE(answer->generated_tokens, 1u);
    EXPECT_LE(answer->generated_tokens, 3u);
    EXPECT_GT(answer->context_tokens, 0u);
    EXPECT_GT(answer->query_tokens, 0u);
    backend_->close_session(1);
  }
  EXPECT_GT(backend_->cache_stats("").misses, 0u) << "block mode looked its blocks up";
}

TEST_F(EngineBackendTest, QueriesOnOneFrameRunAsABatchEachWithItsOwnAnswerOrError) {
  ASSERT_TRUE(backend_->open_session(5, config(fb::AttentionMode::Block, 2048)).ok());
  ASSERT_TRUE(backend_->apply_frame(5, fb::FrameFormat::Whole, kState));
  std::vector<QuerySpec> specs(4, spec(6));
  specs[1].output_schema = R"({"type":"object","properties":{"bet":{"type":"integer","minimum":0,"maximum":950}},)"
                           R"("required":["bet"]})";
  specs[1].max_tokens = 24;
  specs[2].output_schema = R"({"type":"string","format":"email"})";  // a keyword we do not enforce
  specs[3].output_schema = R"({"type":"string","minLength":100})";    // longer than max_tokens
  std::vector<std::string> streamed(specs.size());
  std::vector<ChunkSink> sinks;
  for (std::string& text : streamed) sinks.push_back([&text](std::string_view piece, bool) { text += piece; });
  auto answers = backend_->run_queries(5, specs, sinks);
  ASSERT_EQ(answers.size(), 4u);
  ASSERT_TRUE(answers[0]) << answers[0].error().message;
  EXPECT_EQ(answers[0]->text, streamed[0]);
  ASSERT_TRUE(answers[1]) << answers[1].error().message;
  EXPECT_EQ(answers[1]->stop, fb::StopReason::Complete);
  EXPECT_EQ(answers[1]->text.rfind("{\"bet\":", 0), 0u) << answers[1]->text;
  // The schema'd answer says how sure the model was at its choices; the free one has none.
  EXPECT_TRUE(answers[0]->choices_json.empty()) << answers[0]->choices_json;
  const auto choices = nlohmann::json::parse(answers[1]->choices_json);
  ASSERT_TRUE(choices.is_array() && !choices.empty()) << answers[1]->choices_json;
  for (const auto& choice : choices) {
    EXPECT_EQ(answers[1]->text.rfind(choice["prefix"].get<std::string>(), 0), 0u) << choices;
    EXPECT_GE(choice["options"].size(), 2u);
    EXPECT_GT(choice["options"][0]["p"].get<double>(), 0.0);
  }
  ASSERT_FALSE(answers[2]);
  EXPECT_EQ(answers[2].error().code, fb::ErrorCode::BadRequest);
  EXPECT_NE(answers[2].error().message.find("format"), std::string::npos) << answers[2].error().message;
  ASSERT_FALSE(answers[3]);
  EXPECT_EQ(answers[3].error().code, fb::ErrorCode::Unsatisfiable);
  backend_->close_session(5);
}

// The handler's hook runs between decoding steps of every kind of query
// (lone, batched, joined), and another session's whole query may run there
// without changing the interrupted answer.
TEST_F(EngineBackendTest, TheHookBetweenStepsRunsInEveryKindOfQuery) {
  for (uint64_t id : {21, 22}) {
    ASSERT_TRUE(backend_->open_session(id, config(fb::AttentionMode::Block)).ok());
    ASSERT_TRUE(backend_->apply_frame(id, fb::FrameFormat::Whole, kState));
  }
  QuerySpec forced = spec(6);
  forced.stop = {};
  auto alone = backend_->run_query(21, forced, {});
  ASSERT_TRUE(alone) << alone.error().message;
  if (alone->generated_tokens < 2) GTEST_SKIP() << "the tiny model ended its answer at once: no step to pause at";

  int calls = 0;
  bool in_turn = false;  // the turn's own steps call the hook too: no turn inside it (as the handler)
  std::optional<BackendResult<QueryAnswer>> inside;
  backend_->set_between_steps([&] {
    if (in_turn) return;
    ++calls;
    if (inside) return;
    in_turn = true;
    inside = backend_->run_query(22, spec(), {});  // a turn of another session's
    in_turn = false;
  });
  auto interrupted = backend_->run_query(21, forced, {});
  ASSERT_TRUE(interrupted) << interrupted.error().message;
  EXPECT_EQ(interrupted->text, alone->text);
  EXPECT_GE(calls, 1);
  ASSERT_TRUE(inside && *inside) << "the turn's query was answered";

  calls = 0;
  backend_->run_queries(21, {forced, forced}, {{}, {}});
  EXPECT_GE(calls, 1) << "batched";
  calls = 0;
  std::vector<Backend::SessionQuery> joined(1);
  joined[0].session_id = 21;
  joined[0].spec = forced;
  joined[0].on_answer = [](BackendResult<QueryAnswer>) {};
  backend_->run_across(joined);
  EXPECT_GE(calls, 1) << "joined";
  backend_->set_between_steps({});
  for (uint64_t id : {21, 22}) backend_->close_session(id);
}

// One query of each of several sessions, answered together: each answer
// exactly once, equal to what run_query gives that session alone, streamed
// as it goes; a session the engine does not hold fails alone.
TEST_F(EngineBackendTest, QueriesOfSeveralSessionsAnsweredTogetherAsAlone) {
  const std::vector<uint64_t> ids = {11, 12, 13, 99};  // 99: never opened
  std::vector<std::string> alone;
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    ASSERT_TRUE(backend_->open_session(ids[i], config(fb::AttentionMode::Block, 2048)).ok());
    const std::string state = std::string(kState).replace(8, 1, std::to_string(ids[i]));  // "turn":<id>
    ASSERT_TRUE(backend_->apply_frame(ids[i], fb::FrameFormat::Whole, state));
    auto answer = backend_->run_query(ids[i], spec(4 + static_cast<uint32_t>(i)), {});
    ASSERT_TRUE(answer) << answer.error().message;
    alone.push_back(answer->text);
  }
  std::vector<std::string> streamed(ids.size()), answered(ids.size());
  std::vector<int> calls(ids.size(), 0);
  std::vector<fb::ErrorCode> codes(ids.size(), fb::ErrorCode::None);
  std::vector<Backend::SessionQuery> queries;
  for (size_t i = 0; i < ids.size(); ++i) {
    Backend::SessionQuery q;
    q.session_id = ids[i];
    q.spec = spec(4 + static_cast<uint32_t>(i));
    q.on_chunk = [&streamed, i](std::string_view piece, bool) { streamed[i] += piece; };
    q.on_answer = [&, i](BackendResult<QueryAnswer> answer) {
      ++calls[i];
      if (answer) {
        answered[i] = answer->text;
      } else {
        codes[i] = answer.error().code;
      }
    };
    queries.push_back(std::move(q));
  }
  backend_->run_across(queries);
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    EXPECT_EQ(calls[i], 1) << "session " << ids[i];
    EXPECT_EQ(answered[i], alone[i]) << "session " << ids[i];
    EXPECT_EQ(streamed[i], alone[i]) << "session " << ids[i];
    backend_->close_session(ids[i]);
  }
  EXPECT_EQ(calls.back(), 1);
  EXPECT_EQ(codes.back(), fb::ErrorCode::Internal);  // the scheduler never lets one through: a bug if it does
}

TEST_F(EngineBackendTest, RejectedFramesAreBadJsonAndLeaveTheSessionUsable) {
  ASSERT_TRUE(backend_->open_session(2, config(fb::AttentionMode::Block)).ok());
  ASSERT_TRUE(backend_->apply_frame(2, fb::FrameFormat::Whole, kState));
  auto bad = backend_->apply_frame(2, fb::FrameFormat::Whole, "{\"turn\":");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, fb::ErrorCode::BadJson);
  auto bad_patch = backend_->apply_frame(2, fb::FrameFormat::JsonPatch, R"([{"op":"remove","path":"/nope"}])");
  ASSERT_FALSE(bad_patch);
  EXPECT_EQ(bad_patch.error().code, fb::ErrorCode::BadJson);
  EXPECT_TRUE(backend_->run_query(2, spec(), {}));
  backend_->close_session(2);
}

TEST_F(EngineBackendTest, EngineErrorsMapToProtocolCodes) {
  EXPECT_EQ(backend_->open_session(3, config(fb::AttentionMode::Block, 8)).error().code, fb::ErrorCode::BadRequest)
      << "a context below the engine's floor";
  ASSERT_TRUE(backend_->open_session(4, config(fb::AttentionMode::Full, 64)).ok());
  ASSERT_TRUE(backend_->apply_frame(4, fb::FrameFormat::Whole, kState));
  auto full = backend_->run_query(4, spec(60), {});
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, fb::ErrorCode::ContextFull);
  EXPECT_NE(full.error().message.find("larger context"), std::string::npos) << full.error().message;
  backend_->close_session(4);
}

TEST_F(EngineBackendTest, AnUnknownAdapterIsRefusedAndNoneIsTheBaseModel) {
  SessionConfig named = config(fb::AttentionMode::Block, 256);
  named.adapter = "chess";
  const BackendStatus refused = backend_->open_session(5, named);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, fb::ErrorCode::UnknownAdapter);
  named.adapter = "none";
  EXPECT_TRUE(backend_->open_session(5, named).ok());
  EXPECT_EQ(backend_->info().default_adapter, "none");
  EXPECT_TRUE(backend_->info().adapters.empty());
  backend_->close_session(5);
}

}  // namespace
}  // namespace kvframe::server
