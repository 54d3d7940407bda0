// The client's keepalive (issue 59): while it holds sessions and has sent
// nothing for a third of the server's HelloReply.session_idle_ms, its
// background thread sends a Ping, so the server does not take a quiet game
// for a vanished one; with no session, or against a server whose sessions
// never expire, it sends nothing.
#include "client_test_support.h"

namespace kvframe::test {
namespace {

class ClientKeepalive : public ::testing::Test {
 protected:
  void connect(uint32_t session_idle_ms) {
    server_.session_idle_ms = session_idle_ms;
    client_ = connect_scripted(server_, client_params(server_.endpoint()));
  }
  ScriptedServer server_;
  ClientPtr client_{nullptr, &kvf_client_close};
};

TEST_F(ClientKeepalive, AQuietClientHoldingASessionPingsUntilItClosesIt) {
  connect(600);  // a Ping after 200 ms of silence
  EXPECT_TRUE(server_.quiet(500)) << "no session yet: nothing to keep";
  const kvf_session session = open_scripted(server_, client_.get(), 42);
  for (int i = 0; i < 3; ++i) server_.pong(server_.expect(fb::Body::Ping, 3000));
  auto closing = std::async(std::launch::async, [&] { return kvf_session_close(client_.get(), session); });
  std::optional<Incoming> close = server_.receive(3000);
  while (close && close->type() == fb::Body::Ping) close = server_.receive(3000);  // one may cross the close
  ASSERT_TRUE(close);
  ASSERT_EQ(close->type(), fb::Body::CloseSession);
  server_.session_closed(*close);
  EXPECT_EQ(closing.get(), KVF_OK);
  EXPECT_TRUE(server_.quiet(500)) << "no session left: no Ping";
}

TEST_F(ClientKeepalive, NoPingsWhenTheServersSessionsNeverExpire) {
  connect(0);
  open_scripted(server_, client_.get(), 42);
  EXPECT_TRUE(server_.quiet(700));
}

}  // namespace
}  // namespace kvframe::test
