// A client without the client library: a raw ZeroMQ DEALER speaking the
// protocol byte for byte, for tests against a kvframe-serve process.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <zmq.hpp>

#include "messages.h"

namespace kvframe::server::test {

inline constexpr int kReplyTimeoutMs = 20000;  // a hang, not a speed check
inline constexpr char kState[] = R"({"turn":1,"players":[{"id":"p1","chips":950},{"id":"p2","chips":1000}]})";

struct CurveClientKeys {
  std::string server_public, client_public, client_secret;
};

class Client {
 public:
  Client(zmq::context_t& context, const std::string& endpoint, const CurveClientKeys* curve = nullptr)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    if (curve) {
      socket_.set(zmq::sockopt::curve_serverkey, curve->server_public);
      socket_.set(zmq::sockopt::curve_publickey, curve->client_public);
      socket_.set(zmq::sockopt::curve_secretkey, curve->client_secret);
    }
    socket_.connect(endpoint);
  }
  void send(const std::string& bytes) { socket_.send(zmq::buffer(bytes), zmq::send_flags::none); }
  std::optional<std::string> receive(int timeout_ms) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) == 0) return std::nullopt;
    zmq::message_t message;
    if (!socket_.recv(message, zmq::recv_flags::dontwait)) return std::nullopt;
    return message.to_string();
  }
  // The reply that ends the request (Chunks are collected on the way).
  std::string request(const std::string& bytes, int timeout_ms = kReplyTimeoutMs) {
    send(bytes);
    chunks.clear();
    for (;;) {
      auto reply = receive(timeout_ms);
      if (!reply) return {};
      const fb::Message* m = read_reply(*reply);
      if (m && m->body_type() == fb::Body::Chunk) {
        chunks += m->body_as_Chunk()->text()->str();
        continue;
      }
      return *reply;
    }
  }
  std::string chunks;

 private:
  zmq::socket_t socket_;
};

inline fb::ErrorCode error_code(const std::string& reply) {
  const fb::Message* m = read_reply(reply);
  return m && m->body_type() == fb::Body::Error ? m->body_as_Error()->code() : fb::ErrorCode::None;
}

inline fb::Body body_type(const std::string& reply) {
  const fb::Message* m = read_reply(reply);
  return m ? m->body_type() : fb::Body::NONE;
}

// A game that follows the protocol: its own session, a new frame per round,
// one query about it.
class WellBehavedGame {
 public:
  WellBehavedGame(zmq::context_t& context, const std::string& endpoint, const CurveClientKeys* curve = nullptr)
      : client_(context, endpoint, curve) {}
  bool open() {
    const std::string reply = client_.request(open_session_message(1));
    if (body_type(reply) != fb::Body::SessionOpened) return false;
    session_ = read_reply(reply)->body_as_SessionOpened()->session_id();
    return true;
  }
  // One round; empty when it went right, else what went wrong.
  std::string round() {
    ++frame_;
    const std::string ack = client_.request(frame_message(100 + frame_, session_, frame_, kState));
    if (body_type(ack) != fb::Body::FrameAck) return "frame " + std::to_string(frame_) + " was not acked";
    const std::string result = client_.request(query_message(200 + frame_, session_));
    const fb::Message* m = read_reply(result);
    if (!m || m->body_type() != fb::Body::Result) return "query about frame " + std::to_string(frame_) + " failed";
    if (m->request_id() != 200 + frame_ || m->body_as_Result()->frame_number() != frame_) return "wrong Result";
    return {};
  }

 private:
  Client client_;
  uint64_t session_ = 0;
  uint64_t frame_ = 0;
};

}  // namespace kvframe::server::test
