// Drives a RequestHandler from the test's one thread: messages in through the
// door, engine steps run only when the test says, so queues are built
// deterministically; time comes from a fake clock the test (or the backend,
// while "answering") moves.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "collected_replies.h"
#include "server_fuzz_input.h"
#include "state_echo_backend.h"

namespace kvframe::server::test {

inline constexpr char kTinyState[] = R"({"turn":1,"players":[{"id":"p1","chips":950},{"id":"p2","chips":1000}]})";

class HandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }

  void start(HandlerParams params) {
    params.now = [this] { return now; };
    params.scheduler.session_ids = test_session_ids(7);
    handler = std::make_unique<RequestHandler>(backend, std::move(params), log);
  }
  // From the connection `route`, its own principal (an operator: it reads the
  // whole server's Stats).
  void send(const std::string& bytes, const std::string& route = "game-a") {
    handler->on_message(Peer{route, "conn:" + route, true}, bytes, replies);
  }
  void run_all() {
    while (handler->run_next(replies)) {
    }
  }
  // Replies since the last call, verified.
  std::vector<const fb::Message*> take() {
    taken.swap(replies.all);
    replies.all.clear();
    std::vector<const fb::Message*> out;
    for (const Reply& reply : taken) {
      const fb::Message* message = reply.message();
      EXPECT_NE(message, nullptr) << "a reply failed verification";
      if (message) out.push_back(message);
    }
    return out;
  }
  // The one reply since the last call.
  const fb::Message& only() {
    auto all = take();
    EXPECT_EQ(all.size(), 1u);
    static const std::string empty = hello_message(0);
    return all.empty() ? *read_reply(empty) : *all.front();
  }
  uint64_t open(fb::AttentionMode mode = fb::AttentionMode::Block, const std::string& route = "game-a") {
    send(open_session_message(next_id++, mode), route);
    run_all();
    const fb::Message& reply = only();
    EXPECT_EQ(reply.body_type(), fb::Body::SessionOpened);
    return reply.body_type() == fb::Body::SessionOpened ? reply.body_as_SessionOpened()->session_id() : 0;
  }
  // A session with its first frame applied.
  uint64_t open_with_frame(const std::string& route = "game-a") {
    const uint64_t session = open(fb::AttentionMode::Block, route);
    send(frame_message(next_id++, session, 1, kTinyState), route);
    run_all();
    EXPECT_EQ(only().body_type(), fb::Body::FrameAck);
    return session;
  }

  static fb::ErrorCode error_code(const fb::Message& m) {
    return m.body_type() == fb::Body::Error ? m.body_as_Error()->code() : fb::ErrorCode::None;
  }

  Clock::time_point now{};
  StateEchoBackend backend;
  std::ostringstream log_text;
  Log log{LogLevel::kDebug, &log_text};
  std::unique_ptr<RequestHandler> handler;
  CollectedReplies replies;
  std::vector<Reply> taken;  // owns the bytes take() returned views of
  uint64_t next_id = 1;
};

}  // namespace kvframe::server::test
