// A ROUTER socket the test drives step by step, speaking the real protocol
// (protocol/kvframe.fbs): it shows exactly what the client sent and in which
// order, answers what the test tells it to, and can "restart" (close and bind
// the same port again) to exercise the client's recovery.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "kvframe/protocol/protocol.h"

namespace kvframe::test {

namespace fb = protocol::fb;

// One message from a client, kept with its bytes.
struct Incoming {
  std::string peer;   // the ROUTER's routing id of the connection
  std::string bytes;  // the Message buffer
  const fb::Message& message() const { return *fb::GetMessage(bytes.data()); }
  uint64_t request_id() const { return message().request_id(); }
  fb::Body type() const { return message().body_type(); }
};

class ScriptedServer {
 public:
  ScriptedServer();  // bound to a free loopback port
  ~ScriptedServer();

  const std::string& endpoint() const { return endpoint_; }

  // The next verified message, or nullopt after timeout_ms.
  std::optional<Incoming> receive(int timeout_ms = 5000);
  // The next message, which must be of `type` (a test failure otherwise; the
  // returned message then has the other type).
  Incoming expect(fb::Body type, int timeout_ms = 5000);
  // True when nothing arrives within timeout_ms.
  bool quiet(int timeout_ms);

  void reply(const Incoming& to, const flatbuffers::DetachedBuffer& buffer);
  void hello_reply(const Incoming& to, uint64_t instance_id, uint64_t max_message_bytes = 1 << 20);
  void session_opened(const Incoming& to, uint64_t server_session);
  void session_closed(const Incoming& to);
  void frame_ack(const Incoming& to);
  void chunk(const Incoming& to, uint32_t seq, const std::string& text);
  void result(const Incoming& to, const std::string& text);
  // An npc_action Result: the action as JSON and as FlexBuffers bytes (any
  // bytes: tests send corrupt ones too), stopped Complete, with the
  // model's choices (Result.choices_json) when given.
  void action_result(const Incoming& to, const std::string& action_json, const std::vector<uint8_t>& action,
                     const std::string& choices_json = {});
  void error(const Incoming& to, fb::ErrorCode code, const std::string& message);
  void stats(const Incoming& to);
  void pong(const Incoming& to);
  // expect(Hello) and answer it.
  void answer_hello(uint64_t instance_id, uint64_t max_message_bytes = 1 << 20);

  // What its HelloReplies say of idle expiry (the client pings within it; 0: never).
  uint32_t session_idle_ms = 0;

  // Closes the socket (clients see the connection drop) and binds the same port again.
  void restart();

  // Answers everything on a thread of its own until destroyed (Hello, sessions,
  // frames, queries: "answer <request_id>"); the test must not call the methods above meanwhile.
  void serve_in_background(uint64_t instance_id);

 private:
  void bind(const std::string& endpoint);
  void answer(const Incoming& message, uint64_t instance_id);
  void send_result(const Incoming& to, const std::string& text, const std::string& action_json,
                   const std::vector<uint8_t>& action, fb::StopReason stop, const std::string& choices_json = {});

  zmq::context_t context_;
  zmq::socket_t router_;
  std::string endpoint_;
  std::atomic<bool> stop_{false};
  std::thread background_;
};

}  // namespace kvframe::test
