// What the handler answers at once: untrusted bytes, bad fields, Hello and
// Stats; and what a query's answer carries (streaming, NpcAction, errors).
#include <cmath>

#include "handler_fixture.h"

namespace kvframe::server::test {
namespace {

TEST_F(HandlerTest, GarbageIsMalformed) {
  send("definitely not a flatbuffer");
  const fb::Message& reply = only();
  EXPECT_EQ(error_code(reply), fb::ErrorCode::Malformed);
  EXPECT_EQ(reply.request_id(), 0u);
}

TEST_F(HandlerTest, TruncatedAndFlippedBuffersAreMalformedOrRefused) {
  const std::string valid = query_message(77, 1234);
  send(valid.substr(0, valid.size() / 2));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Malformed);
  for (std::size_t i = 0; i < valid.size(); ++i) {
    std::string flipped = valid;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x5a);
    send(flipped);
    EXPECT_EQ(take().size(), 1u) << "one reply whatever byte " << i << " says";
  }
}

TEST_F(HandlerTest, WrongVersionNamesTheRequest) {
  send(hello_message(42, protocol::kProtocolVersion + 1));
  const fb::Message& reply = only();
  EXPECT_EQ(error_code(reply), fb::ErrorCode::WrongVersion);
  EXPECT_EQ(reply.request_id(), 42u);
}

TEST_F(HandlerTest, OversizeMessageIsTooLargeNamingTheRequest) {
  HandlerParams params;
  params.limits.max_message_bytes = 1024;
  start(params);
  const uint64_t session = open();
  send(frame_message(9, session, 1, "{\"pad\":\"" + std::string(2000, 'x') + "\"}"));
  const fb::Message& reply = only();
  EXPECT_EQ(error_code(reply), fb::ErrorCode::TooLarge);
  EXPECT_EQ(reply.request_id(), 9u);
}

TEST_F(HandlerTest, BadFieldsAreBadRequestsNamingTheField) {
  const uint64_t session = open_with_frame();
  QueryOptions no_tokens;
  no_tokens.max_tokens = 0;
  send(query_message(1, session, no_tokens));
  QueryOptions no_instruction;
  no_instruction.instruction = "";
  send(query_message(2, session, no_instruction));
  send(open_session_message(3, fb::AttentionMode::Block, 0, R"({"max_depth": "deep"})"));
  send(open_session_message(4, fb::AttentionMode::Block, StateEchoBackend::kMaxContext + 1));
  send(open_session_message(5, fb::AttentionMode::Block, 0, {}, options::knob_block_heads::wire_max + 1));
  send(open_session_message(6, fb::AttentionMode::Block, 0, {}, -2));
  send(open_session_message(7, fb::AttentionMode::Block, 0, {}, -1, 1.5f));
  send(open_session_message(8, fb::AttentionMode::Block, 0, {}, -1, std::nanf("")));
  send(open_session_message(9, fb::AttentionMode::Block, 0, {}, -1, -1, 0.1f));
  const char* fields[] = {"max_tokens",  "instruction", "rules_json",  "context_tokens",   "block_heads",
                          "block_heads", "blend_ratio", "blend_ratio", "block_temperature"};
  auto all = take();
  ASSERT_EQ(all.size(), 9u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(error_code(*all[i]), fb::ErrorCode::BadRequest);
    EXPECT_NE(all[i]->body_as_Error()->message()->str().find(fields[i]), std::string::npos)
        << all[i]->body_as_Error()->message()->str();
  }
}

TEST_F(HandlerTest, UnservedModesAreUnsupported) {
  HandlerParams params;
  params.modes = {fb::AttentionMode::Block};
  start(params);
  send(open_session_message(1, fb::AttentionMode::Full));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Unsupported);
}

TEST_F(HandlerTest, StopStringsAreBounded) {
  const uint64_t session = open_with_frame();
  QueryOptions many;
  many.stop.assign(17, "x");
  send(query_message(1, session, many));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::BadRequest);
  QueryOptions empty;
  empty.stop = {"\n", ""};
  send(query_message(2, session, empty));
  EXPECT_EQ(error_code(only()), fb::ErrorCode::BadRequest);
  QueryOptions fine;
  fine.stop = {"\n", "Player:"};
  send(query_message(3, session, fine));
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::Result);
}

TEST_F(HandlerTest, HelloSaysWhatTheServerServes) {
  HandlerParams params;
  params.modes = {fb::AttentionMode::Full, fb::AttentionMode::Block};
  start(params);
  send(hello_message(5));
  const fb::Message& reply = only();
  ASSERT_EQ(reply.body_type(), fb::Body::HelloReply);
  const fb::HelloReply& hello = *reply.body_as_HelloReply();
  EXPECT_EQ(hello.model()->str(), "state-echo");
  ASSERT_EQ(hello.modes()->size(), 2u);
  EXPECT_EQ(hello.default_mode(), fb::AttentionMode::Block);
  EXPECT_EQ(hello.max_context(), StateEchoBackend::kMaxContext);
  EXPECT_EQ(hello.max_message_bytes(), protocol::kDefaultMaxMessageBytes);
  EXPECT_NE(hello.instance_id(), 0u);
}

TEST_F(HandlerTest, SessionsGetTheServersBlockHeadsUnlessTheyAsk) {
  HandlerParams params;
  params.fidelity.block_heads = 8;
  start(params);
  send(open_session_message(1));                                         // -1: the server's
  send(open_session_message(2, fb::AttentionMode::Block, 0, {}, 0));     // off
  send(open_session_message(3, fb::AttentionMode::Block, 0, {}, 32));
  run_all();
  EXPECT_EQ(backend.block_heads, (std::vector<int32_t>{8, 0, 32}));
}

TEST_F(HandlerTest, SessionsGetTheServersBlendAndTemperatureUnlessTheyAsk) {
  HandlerParams params;
  params.fidelity.blend_ratio = 0.15f;
  params.fidelity.block_temperature = 1.15f;
  start(params);
  send(open_session_message(1));                                                 // -1: the server's
  send(open_session_message(2, fb::AttentionMode::Block, 0, {}, -1, 0, 1));     // off
  send(open_session_message(3, fb::AttentionMode::Block, 0, {}, -1, 0.5f, 2));
  run_all();
  EXPECT_EQ(backend.blend_ratios, (std::vector<float>{0.15f, 0, 0.5f}));
  EXPECT_EQ(backend.temperatures, (std::vector<float>{1.15f, 1, 2}));
}

TEST_F(HandlerTest, SessionsGetTheDefaultContextCappedByTheModel) {
  send(open_session_message(1, fb::AttentionMode::Prefix));
  run_all();
  const fb::Message& reply = only();
  ASSERT_EQ(reply.body_type(), fb::Body::SessionOpened);
  EXPECT_EQ(reply.body_as_SessionOpened()->context_tokens(), StateEchoBackend::kMaxContext);
  EXPECT_EQ(reply.body_as_SessionOpened()->mode(), fb::AttentionMode::Prefix);
}

TEST_F(HandlerTest, StreamedQueriesSendChunksThenTheResult) {
  const uint64_t session = open_with_frame();
  QueryOptions stream;
  stream.stream = true;
  send(query_message(8, session, stream));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 3u);
  std::string streamed;
  for (uint32_t seq = 0; seq < 2; ++seq) {
    ASSERT_EQ(all[seq]->body_type(), fb::Body::Chunk);
    EXPECT_EQ(all[seq]->request_id(), 8u);
    EXPECT_EQ(all[seq]->body_as_Chunk()->seq(), seq);
    streamed += all[seq]->body_as_Chunk()->text()->str();
  }
  EXPECT_FALSE(all[0]->body_as_Chunk()->sentence_end());
  EXPECT_TRUE(all[1]->body_as_Chunk()->sentence_end());  // as the backend marked it
  ASSERT_EQ(all[2]->body_type(), fb::Body::Result);
  EXPECT_EQ(all[2]->body_as_Result()->text()->str(), streamed);
}

TEST_F(HandlerTest, NpcActionCarriesTheTextWhenItIsAJsonObject) {
  const uint64_t session = open_with_frame();
  QueryOptions action;
  action.kind = fb::TaskKind::NpcAction;
  backend.answer = R"({"action":"raise","amount":50})";
  send(query_message(1, session, action));
  run_all();
  backend.answer = "p2 raises";
  send(query_message(2, session, action));
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->body_as_Result()->action_json()->str(), R"({"action":"raise","amount":50})");
  EXPECT_EQ(all[1]->body_as_Result()->action_json()->str(), "");
}

TEST_F(HandlerTest, BackendErrorsReachTheClientWithTheirCode) {
  const uint64_t session = open_with_frame();
  QueryOptions too_long;
  too_long.max_tokens = StateEchoBackend::kMaxContext;
  send(query_message(1, session, too_long));
  run_all();
  const fb::Message& reply = only();
  EXPECT_EQ(error_code(reply), fb::ErrorCode::ContextFull);
  EXPECT_EQ(reply.body_as_Error()->session_id(), session);
}

TEST_F(HandlerTest, StatsCountWhatHappened) {
  const uint64_t session = open_with_frame();
  send(query_message(1, session));
  send(query_message(2, 0));
  run_all();
  take();
  send(stats_request_message(3));
  const fb::Message& reply = only();
  ASSERT_EQ(reply.body_type(), fb::Body::Stats);
  const fb::Stats& stats = *reply.body_as_Stats();
  EXPECT_EQ(stats.sessions(), 1u);
  EXPECT_EQ(stats.frames(), 1u);
  EXPECT_EQ(stats.queries(), 1u);
  EXPECT_EQ(stats.errors(), 1u);
  EXPECT_EQ(stats.queue_depth(), 0u);
  std::vector<std::string> stages;
  for (const fb::StageStats* stage : *stats.stages()) stages.push_back(stage->name()->str());
  for (const char* expected : {"queue", "engine", "server"}) {
    EXPECT_NE(std::find(stages.begin(), stages.end(), expected), stages.end()) << expected;
  }
}

TEST_F(HandlerTest, ErrorsAreLoggedAsWarnings) {
  send(query_message(1, 0));
  take();
  EXPECT_NE(log_text.str().find("level=warn msg=\"request refused\" code=UnknownSession"), std::string::npos)
      << log_text.str();
}

}  // namespace
}  // namespace kvframe::server::test
