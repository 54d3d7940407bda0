// Tenants at the door: a session answers only the principal that opened it,
// Stats show a client its own figures, each principal has its quotas and its
// own block-cache scope (docs/protocol.md, "Threat model").
#include <set>

#include "handler_fixture.h"

namespace kvframe::server::test {
namespace {

class TenancyTest : public HandlerTest {
 protected:
  // As a client that is not an operator.
  void send_as(const std::string& bytes, const std::string& route) {
    handler->on_message(Peer{route, "conn:" + route, false}, bytes, replies);
  }
  const fb::Stats& stats_as(const std::string& route) {
    send_as(stats_request_message(next_id++), route);
    const fb::Message& reply = only();
    EXPECT_EQ(reply.body_type(), fb::Body::Stats);
    return *reply.body_as_Stats();
  }
  static std::string error_text(const fb::Message& m) {
    return m.body_type() == fb::Body::Error && m.body_as_Error()->message() ? m.body_as_Error()->message()->str() : "";
  }
};

TEST_F(TenancyTest, AnotherPrincipalsSessionIsAnsweredAsUnknownAndTheOwnerGoesOn) {
  const uint64_t mine = open_with_frame("game-a");
  const uint64_t never = 0x0123456789abcdefull;
  // What the intruder gets for the owner's id and for an id nobody holds.
  std::vector<std::pair<std::string, std::string>> attempts = {
      {frame_message(50, mine, 2, kTinyState), frame_message(50, never, 2, kTinyState)},
      {frame_message(51, mine, 9, R"({"turn":3})", fb::FrameFormat::MergePatch),
       frame_message(51, never, 9, R"({"turn":3})", fb::FrameFormat::MergePatch)},
      {query_message(52, mine), query_message(52, never)},
      {close_session_message(53, mine), close_session_message(53, never)}};
  for (const auto& [on_mine, on_none] : attempts) {
    send_as(on_mine, "intruder");
    const fb::Message& a = only();
    const std::string got = error_text(a);
    const fb::ErrorCode code = error_code(a);
    const uint64_t session = a.body_type() == fb::Body::Error ? a.body_as_Error()->session_id() : 0;
    send_as(on_none, "intruder");
    const fb::Message& b = only();
    EXPECT_EQ(code, fb::ErrorCode::UnknownSession);
    EXPECT_EQ(code, error_code(b));
    // Word for word, the id swapped: nothing tells a live session from none.
    std::string expected = error_text(b);
    expected.replace(expected.find(std::to_string(never)), std::to_string(never).size(), std::to_string(mine));
    EXPECT_EQ(got, expected);
    EXPECT_EQ(session, mine);
  }
  run_all();
  EXPECT_TRUE(take().empty()) << "nothing of the intruder's ran";
  send(frame_message(60, mine, 2, R"({"turn":2})", fb::FrameFormat::MergePatch), "game-a");
  send(query_message(61, mine), "game-a");
  run_all();
  auto all = take();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0]->body_type(), fb::Body::FrameAck) << "the owner's next frame is accepted";
  EXPECT_EQ(all[1]->body_type(), fb::Body::Result);
}

TEST_F(TenancyTest, SessionsCarryTheirPrincipalsCacheScopeOrTheirGroups) {
  HandlerParams params;
  params.cache_groups = {{"conn:studio-1", "studio"}, {"conn:studio-2", "studio"}};
  start(params);
  open(fb::AttentionMode::Block, "game-a");
  open(fb::AttentionMode::Block, "studio-1");
  open(fb::AttentionMode::Block, "studio-2");
  EXPECT_EQ(backend.scopes, (std::vector<std::string>{"conn:game-a", "group:studio", "group:studio"}));
}

TEST_F(TenancyTest, StatsShowAClientItsOwnFiguresAndAnOperatorTheServers) {
  const uint64_t a = open_with_frame("game-a");
  send(query_message(20, a), "game-a");
  run_all();
  take();
  const fb::Stats& other = stats_as("other");
  EXPECT_FALSE(other.server_wide());
  EXPECT_EQ(other.sessions(), 0u);
  EXPECT_EQ(other.frames(), 0u);
  EXPECT_EQ(other.queries(), 0u);
  EXPECT_EQ(other.stages()->size(), 0u);
  const fb::Stats& own = stats_as("game-a");
  EXPECT_FALSE(own.server_wide());
  EXPECT_EQ(own.sessions(), 1u);
  EXPECT_EQ(own.frames(), 1u);
  EXPECT_EQ(own.queries(), 1u);
  send(stats_request_message(next_id++), "operator");  // the fixture's send() is an operator's
  const fb::Message& reply = only();
  ASSERT_EQ(reply.body_type(), fb::Body::Stats);
  EXPECT_TRUE(reply.body_as_Stats()->server_wide());
  EXPECT_EQ(reply.body_as_Stats()->queries(), 1u);
  EXPECT_GT(reply.body_as_Stats()->stages()->size(), 0u);
}

// --max-memory-mb: the sessions' KV, all clients together, within what the
// weights and the block store leave; over it Busy, whoever asks.
TEST_F(TenancyTest, SessionMemoryIsBoundedServerWide) {
  HandlerParams params;
  params.scheduler.session_kv_bytes = 1000;
  params.scheduler.kv_bytes_of = [](fb::AttentionMode mode, uint32_t context) -> uint64_t {
    return mode == fb::AttentionMode::Block ? 2 * context : context;  // block keeps slack
  };
  start(params);
  send(open_session_message(1, fb::AttentionMode::Block, 400), "one");  // 800 bytes
  run_all();
  const uint64_t first = only().body_as_SessionOpened()->session_id();
  send(open_session_message(2, fb::AttentionMode::Block, 101), "another");  // 202: over
  const fb::Message& over = only();
  EXPECT_EQ(error_code(over), fb::ErrorCode::Busy);
  EXPECT_NE(error_text(over).find("--max-memory-mb"), std::string::npos) << error_text(over);
  EXPECT_EQ(error_text(over).find("800"), std::string::npos) << "what others hold is not told";
  send(open_session_message(3, fb::AttentionMode::Full, 200), "another");  // 200: fits
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::SessionOpened);
  // Stats: each client its own sessions' KV, the operator all of it.
  EXPECT_EQ(stats_as("one").session_kv_bytes(), 800u);
  EXPECT_EQ(stats_as("another").session_kv_bytes(), 200u);
  send(stats_request_message(next_id++), "operator");
  const fb::Stats& server_wide = *only().body_as_Stats();
  EXPECT_EQ(server_wide.session_kv_bytes(), 1000u);
  // The process's memory moves with everyone's work: the operator's only.
  EXPECT_GT(server_wide.resident_bytes(), 0u);
  EXPECT_LE(server_wide.scratch_bytes(), server_wide.resident_bytes());
  EXPECT_EQ(stats_as("one").resident_bytes(), 0u);
  EXPECT_EQ(stats_as("one").scratch_bytes(), 0u);
  send(close_session_message(4, first), "one");
  run_all();
  take();
  EXPECT_EQ(stats_as("one").session_kv_bytes(), 0u);
  send(open_session_message(5, fb::AttentionMode::Block, 400), "another");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::SessionOpened) << "a closed session's memory came back";
}

TEST_F(TenancyTest, SessionAndContextQuotasRefuseOneClientWhileAnotherIsServed) {
  HandlerParams params;
  params.quotas.sessions = 2;
  params.quotas.context_tokens = 600;
  start(params);
  send(open_session_message(1, fb::AttentionMode::Block, 100), "greedy");
  send(open_session_message(2, fb::AttentionMode::Block, 100), "greedy");
  send(open_session_message(3, fb::AttentionMode::Block, 100), "greedy");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::QuotaExceeded) << "its third session";
  run_all();
  EXPECT_EQ(take().size(), 2u);
  send(open_session_message(4, fb::AttentionMode::Block, 100), "modest");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::SessionOpened) << "another client is not affected";

  start(params);
  send(open_session_message(1, fb::AttentionMode::Block, 400), "greedy");
  send(open_session_message(2, fb::AttentionMode::Block, 201), "greedy");
  const fb::Message& over = only();
  EXPECT_EQ(error_code(over), fb::ErrorCode::QuotaExceeded) << "context tokens summed";
  EXPECT_NE(error_text(over).find("context tokens"), std::string::npos) << error_text(over);
  run_all();
  const uint64_t first = only().body_as_SessionOpened()->session_id();
  send(close_session_message(3, first), "greedy");
  run_all();
  take();
  send(open_session_message(4, fb::AttentionMode::Block, 500), "greedy");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::SessionOpened) << "closing gave the tokens back";

  // The share comes back when the close is admitted, not when the engine
  // gets to it: a game that opens right after closing is not refused.
  start(params);
  send(open_session_message(1, fb::AttentionMode::Block, 100), "greedy");
  send(open_session_message(2, fb::AttentionMode::Block, 100), "greedy");
  run_all();
  const uint64_t one = take().front()->body_as_SessionOpened()->session_id();
  send(close_session_message(3, one), "greedy");
  send(open_session_message(4, fb::AttentionMode::Block, 100), "greedy");
  run_all();
  auto answered = take();
  ASSERT_EQ(answered.size(), 2u);
  EXPECT_EQ(answered[0]->body_type(), fb::Body::SessionClosed);
  EXPECT_EQ(answered[1]->body_type(), fb::Body::SessionOpened);
  send(open_session_message(5, fb::AttentionMode::Block, 100), "greedy");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::QuotaExceeded) << "still two open";
}

TEST_F(TenancyTest, QueuedRequestQuotaIsPerClient) {
  HandlerParams params;
  params.quotas.queued = 3;
  start(params);
  const uint64_t a = open_with_frame("game-a");
  const uint64_t b = open_with_frame("game-b");
  for (uint64_t i = 0; i < 4; ++i) send(query_message(10 + i, a), "game-a");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::QuotaExceeded);
  send(query_message(20, b), "game-b");
  EXPECT_TRUE(take().empty()) << "game-b's query is queued";
  run_all();
  EXPECT_EQ(take().size(), 4u);
}

TEST_F(TenancyTest, MessageRateQuotaRefusesAFloodUnreadAndRefills) {
  HandlerParams params;
  params.rate = {10, 5};  // 10 a second, a burst of 5
  start(params);
  for (int i = 0; i < 8; ++i) send(hello_message(static_cast<uint64_t>(i)), "flood");
  int refused = 0;
  for (const fb::Message* m : take()) refused += error_code(*m) == fb::ErrorCode::QuotaExceeded;
  EXPECT_EQ(refused, 3);
  send(hello_message(9), "calm");
  EXPECT_EQ(only().body_type(), fb::Body::HelloReply) << "another client keeps its own bucket";
  now += std::chrono::milliseconds(200);  // two tokens back
  send(hello_message(10), "flood");
  EXPECT_EQ(only().body_type(), fb::Body::HelloReply);
}

TEST_F(TenancyTest, SessionIdsComeFromTheCsprngWhenNoSourceIsGiven) {
  HandlerParams params;
  params.now = [this] { return now; };
  handler = std::make_unique<RequestHandler>(backend, std::move(params), log);  // no test_session_ids
  std::set<uint64_t> ids;
  for (int i = 0; i < 32; ++i) {
    send(open_session_message(static_cast<uint64_t>(i)), "game-" + std::to_string(i % 2));
    run_all();
    ids.insert(only().body_as_SessionOpened()->session_id());
  }
  EXPECT_EQ(ids.size(), 32u);
  // Two servers seeded alike would agree; two CSPRNG draws do not.
  const HandlerParams defaults;
  RequestHandler second(backend, defaults, log);
  second.on_message(Peer{"x", "conn:x", false}, open_session_message(1), replies);
  second.run_next(replies);
  const uint64_t other = read_reply(replies.all.back().bytes)->body_as_SessionOpened()->session_id();
  EXPECT_EQ(ids.count(other), 0u);
}

}  // namespace
}  // namespace kvframe::server::test
