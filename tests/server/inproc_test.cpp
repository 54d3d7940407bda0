// A server and its games in one process, over inproc:// (what kvframe-holdem
// does without --server): the client makes its sockets in the server's ZeroMQ
// context (kvf_client_params.zmq_context), and two clients share it.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "kvframe/client/kvframe_client.hpp"
#include "kvframe/server/server.h"
#include "state_echo_backend.h"

namespace kvframe::server::test {
namespace {

namespace kc = kvframe::client;

TEST(InprocTest, ClientsInTheServersContextAreServed) {
  StateEchoBackend backend;
  std::ostringstream log_text;
  Log log(LogLevel::kError, &log_text);
  ServerParams params;
  params.bind = "inproc://kvframe-inproc-test";
  auto server = Server::create(backend, params, log);
  ASSERT_TRUE(server) << server.error().message;
  std::thread serving([&] { (*server)->run(); });
  {
    kc::Client::Params where((*server)->endpoint());
    where.zmq_context = (*server)->zmq_context();
    auto first = kc::Client::connect(where);
    auto second = kc::Client::connect(where);  // same context: its inproc names must not clash
    ASSERT_TRUE(first) << first.status().message();
    ASSERT_TRUE(second) << second.status().message();
    for (kc::Client* client : {&*first, &*second}) {
      auto session = client->open_session({"holdem"});
      ASSERT_TRUE(session) << session.status().message();
      ASSERT_TRUE(session->send_frame(1, KVF_FRAME_WHOLE, R"({"state":{"pot":60}})"));
      kc::Answer answer = session->ask({"What now?"}).get();
      ASSERT_TRUE(answer.status) << answer.status.message();
      EXPECT_NE(answer.text.find("What now?"), std::string::npos) << answer.text;
    }
  }
  (*server)->stop();
  serving.join();
}

TEST(InprocTest, WithoutTheContextAnInprocEndpointIsNotReached) {
  StateEchoBackend backend;
  std::ostringstream log_text;
  Log log(LogLevel::kError, &log_text);
  ServerParams params;
  params.bind = "inproc://kvframe-inproc-unreached";
  auto server = Server::create(backend, params, log);
  ASSERT_TRUE(server) << server.error().message;
  kc::Client::Params where((*server)->endpoint());
  where.connect_timeout_ms = 200;
  auto client = kc::Client::connect(where);  // its own context: nothing bound there
  EXPECT_FALSE(client);
}

}  // namespace
}  // namespace kvframe::server::test
