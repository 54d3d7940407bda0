// Keepalive (issue 59): idle expiry closes the sessions of a client that is
// gone, never of one still there with nothing to ask. Any request the server
// can read refreshes its principal's idle clock, a Ping included, and a Ping
// is answered at the door without an engine step.
#include "handler_fixture.h"

namespace kvframe::server::test {
namespace {

using std::chrono::seconds;

class KeepaliveTest : public HandlerTest {
 protected:
  void SetUp() override {
    HandlerParams params;
    params.session_idle = seconds(60);
    start(params);
  }
};

TEST_F(KeepaliveTest, APingKeepsThePingersSessionsAndNoOneElses) {
  const uint64_t pinger = open_with_frame("game-a");
  const uint64_t silent = open_with_frame("game-b");
  for (int i = 0; i < 4; ++i) {  // 80 s: game-a is never silent for 60 s, game-b is from the 60th
    now += seconds(20);
    send(ping_message(next_id++), "game-a");
    EXPECT_EQ(only().body_type(), fb::Body::Pong) << "answered at once, before any engine step";
    run_all();
    EXPECT_TRUE(take().empty());
  }
  EXPECT_EQ(backend.open_sessions(), 1u);
  EXPECT_EQ(handler->stats().snapshot().counters.sessions_expired, 1u) << "game-b's only";
  send(query_message(next_id++, pinger), "game-a");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::Result);
  send(query_message(next_id++, silent), "game-b");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::UnknownSession);
}

TEST_F(KeepaliveTest, AnyRequestItCanReadKeepsAClientsSessions) {
  const uint64_t session = open_with_frame("game-a");
  now += seconds(45);
  send(stats_request_message(next_id++), "game-a");  // answered at the door, like a Ping
  EXPECT_EQ(only().body_type(), fb::Body::Stats);
  now += seconds(45);
  send(hello_message(next_id++), "game-a");
  EXPECT_EQ(only().body_type(), fb::Body::HelloReply);
  now += seconds(45);
  run_all();
  EXPECT_EQ(handler->stats().snapshot().counters.sessions_expired, 0u);
  send(query_message(next_id++, session), "game-a");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::Result);
}

TEST_F(KeepaliveTest, AMalformedPingGetsATypedErrorKeepsNothingAndDisturbsNoOne) {
  open_with_frame("game-a");
  const uint64_t other = open_with_frame("game-b");
  now += seconds(30);
  const std::string ping = ping_message(next_id++);
  send(ping.substr(0, ping.size() / 2), "game-a");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::Malformed);
  send(ping_message(next_id++, protocol::kProtocolVersion + 1), "game-a");
  EXPECT_EQ(error_code(only()), fb::ErrorCode::WrongVersion);
  send(ping_message(next_id++), "game-b");
  EXPECT_EQ(only().body_type(), fb::Body::Pong);
  now += seconds(31);
  run_all();
  EXPECT_EQ(handler->stats().snapshot().counters.sessions_expired, 1u) << "game-a's: refused bytes are no sign of life";
  send(query_message(next_id++, other), "game-b");
  run_all();
  EXPECT_EQ(only().body_type(), fb::Body::Result);
}

TEST_F(KeepaliveTest, HelloReplyTellsTheClientTheIdleLimit) {
  send(hello_message(next_id++));
  const fb::HelloReply* hello = only().body_as_HelloReply();
  ASSERT_NE(hello, nullptr);
  EXPECT_EQ(hello->session_idle_ms(), 60000u);
  start({});  // sessions never expire: a client has no reason to ping
  send(hello_message(next_id++));
  hello = only().body_as_HelloReply();
  ASSERT_NE(hello, nullptr);
  EXPECT_EQ(hello->session_idle_ms(), 0u);
}

}  // namespace
}  // namespace kvframe::server::test
