// A server and its games in one process, over inproc:// (what kvframe-holdem
// does without --server): the client makes its sockets in the server's ZeroMQ
// context (kvf_client_params.zmq_context), and two clients share it.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "kvframe/client/kvframe_client.hpp"
#include "kvframe/server_core/server.h"
#include "state_echo_backend.h"

namespace kvframe::server::test {
namespace {

namespace kc = kvframe::client;

// A Server on `endpoint` over the state-echo backend.
struct InprocServer {
  explicit InprocServer(const std::string& endpoint) {
    ServerParams params;
    params.bind = endpoint;
    auto created = Server::create(backend, params, log);
    if (created) server = std::move(created).value();
  }
  StateEchoBackend backend;
  std::ostringstream log_text;
  Log log{LogLevel::kError, &log_text};
  std::unique_ptr<Server> server;
};

TEST(InprocTest, ClientsInTheServersContextAreServed) {
  InprocServer local("inproc://kvframe-inproc-test");
  ASSERT_TRUE(local.server) << local.log_text.str();
  std::thread serving([&] { local.server->run(); });
  {
    kc::Client::Params where(local.server->endpoint());
    where.zmq_context = local.server->zmq_context();
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
  local.server->stop();
  serving.join();
}

TEST(InprocTest, WithoutTheContextAnInprocEndpointIsNotReached) {
  InprocServer local("inproc://kvframe-inproc-unreached");
  ASSERT_TRUE(local.server) << local.log_text.str();
  kc::Client::Params where(local.server->endpoint());
  where.connect_timeout_ms = 200;
  EXPECT_FALSE(kc::Client::connect(where));  // its own context: nothing is bound there
}

}  // namespace
}  // namespace kvframe::server::test
