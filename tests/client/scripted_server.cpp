#include "scripted_server.h"

#include <gtest/gtest.h>

#include <chrono>

namespace kvframe::test {

namespace {

uint64_t session_of(const fb::Message& m) {
  switch (m.body_type()) {
    case fb::Body::Frame:
      return m.body_as_Frame()->session_id();
    case fb::Body::Query:
      return m.body_as_Query()->session_id();
    case fb::Body::CloseSession:
      return m.body_as_CloseSession()->session_id();
    default:
      return 0;
  }
}

}  // namespace

ScriptedServer::ScriptedServer() : router_(context_, zmq::socket_type::router) {
  bind("tcp://127.0.0.1:*");
  endpoint_ = router_.get(zmq::sockopt::last_endpoint);
}

ScriptedServer::~ScriptedServer() {
  stop_ = true;
  if (background_.joinable()) background_.join();
}

void ScriptedServer::bind(const std::string& endpoint) {
  router_.set(zmq::sockopt::linger, 0);
  router_.set(zmq::sockopt::router_mandatory, 0);
  // The old socket's port is released asynchronously by ZeroMQ's I/O thread.
  for (int attempt = 0;; ++attempt) {
    try {
      router_.bind(endpoint);
      return;
    } catch (const zmq::error_t&) {
      if (attempt == 200) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
}

std::optional<Incoming> ScriptedServer::receive(int timeout_ms) {
  zmq::pollitem_t item{router_.handle(), 0, ZMQ_POLLIN, 0};
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || zmq::poll(&item, 1, left) == 0) return std::nullopt;
    zmq::message_t peer;
    zmq::message_t body;
    if (!router_.recv(peer) || !router_.recv(body)) continue;
    Incoming in{peer.to_string(), body.to_string()};
    auto decoded = protocol::decode(in.bytes);
    EXPECT_TRUE(decoded.ok()) << "the client sent an invalid message: " << decoded.error().message;
    if (decoded.ok()) return in;
  }
}

Incoming ScriptedServer::expect(fb::Body type, int timeout_ms) {
  std::optional<Incoming> in = receive(timeout_ms);
  if (!in) {
    ADD_FAILURE() << "expected a " << fb::EnumNameBody(type) << " from the client; nothing came";
    flatbuffers::FlatBufferBuilder b;
    protocol::finish_message(b, 0, fb::CreateStatsRequest(b));
    return Incoming{"", std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize())};
  }
  EXPECT_EQ(fb::EnumNameBody(in->type()), std::string(fb::EnumNameBody(type)));
  return *in;
}

bool ScriptedServer::quiet(int timeout_ms) { return !receive(timeout_ms).has_value(); }

void ScriptedServer::reply(const Incoming& to, const flatbuffers::DetachedBuffer& buffer) {
  router_.send(zmq::buffer(to.peer), zmq::send_flags::sndmore);
  router_.send(zmq::const_buffer(buffer.data(), buffer.size()));
}

void ScriptedServer::hello_reply(const Incoming& to, uint64_t instance_id, uint64_t max_message_bytes) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<fb::AttentionMode> modes = {fb::AttentionMode::Full, fb::AttentionMode::Block};
  protocol::finish_message(b, to.request_id(),
                           fb::CreateHelloReplyDirect(b, "scripted-0.1", "tiny", &modes, fb::AttentionMode::Block,
                                                      max_message_bytes, 4096, instance_id, nullptr, nullptr,
                                                      session_idle_ms));
  reply(to, b.Release());
}

void ScriptedServer::session_opened(const Incoming& to, uint64_t server_session) {
  flatbuffers::FlatBufferBuilder b;
  protocol::finish_message(b, to.request_id(), fb::CreateSessionOpened(b, server_session, 2048));
  reply(to, b.Release());
}

void ScriptedServer::session_closed(const Incoming& to) {
  flatbuffers::FlatBufferBuilder b;
  protocol::finish_message(b, to.request_id(), fb::CreateSessionClosed(b, session_of(to.message())));
  reply(to, b.Release());
}

void ScriptedServer::frame_ack(const Incoming& to) {
  const fb::Frame* frame = to.message().body_as_Frame();
  flatbuffers::FlatBufferBuilder b;
  protocol::finish_message(b, to.request_id(),
                           fb::CreateFrameAck(b, frame ? frame->session_id() : 0, frame ? frame->frame_number() : 0));
  reply(to, b.Release());
}

void ScriptedServer::chunk(const Incoming& to, uint32_t seq, const std::string& text) {
  flatbuffers::FlatBufferBuilder b;
  protocol::finish_message(b, to.request_id(),
                           fb::CreateChunkDirect(b, session_of(to.message()), seq, text.c_str(), false));
  reply(to, b.Release());
}

void ScriptedServer::result(const Incoming& to, const std::string& text) {
  send_result(to, text, {}, {}, fb::StopReason::MaxTokens);
}

void ScriptedServer::action_result(const Incoming& to, const std::string& action_json,
                                   const std::vector<uint8_t>& action, const std::string& choices_json) {
  send_result(to, action_json, action_json, action, fb::StopReason::Complete, choices_json);
}

void ScriptedServer::send_result(const Incoming& to, const std::string& text, const std::string& action_json,
                                 const std::vector<uint8_t>& action, fb::StopReason stop,
                                 const std::string& choices_json) {
  const fb::Query* query = to.message().body_as_Query();
  flatbuffers::FlatBufferBuilder b;
  auto report = fb::CreateReport(b, fb::AttentionMode::Block, 3, 2, 1);
  auto text_offset = b.CreateString(text);
  auto json_offset = action_json.empty() ? 0 : b.CreateString(action_json);
  auto action_offset = action.empty() ? 0 : b.CreateVector(action);
  auto choices_offset = choices_json.empty() ? 0 : b.CreateString(choices_json);
  protocol::finish_message(b, to.request_id(),
                           fb::CreateResult(b, query ? query->session_id() : 0, query ? query->frame_number() : 0,
                                            text_offset, json_offset, stop, report, action_offset, choices_offset));
  reply(to, b.Release());
}

void ScriptedServer::error(const Incoming& to, fb::ErrorCode code, const std::string& message) {
  reply(to, protocol::error_message(to.request_id(), code, message, session_of(to.message())));
}

void ScriptedServer::stats(const Incoming& to) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::StageStats>> stages = {fb::CreateStageStatsDirect(b, "engine", 5, 1.5f, 3.0f)};
  auto stage_vector = b.CreateVector(stages);
  fb::StatsBuilder s(b);
  s.add_uptime_s(12.5);
  s.add_sessions(2);
  s.add_frames(40);
  s.add_queries(7);
  s.add_stages(stage_vector);
  protocol::finish_message(b, to.request_id(), s.Finish());
  reply(to, b.Release());
}

void ScriptedServer::pong(const Incoming& to) {
  flatbuffers::FlatBufferBuilder b;
  protocol::finish_message(b, to.request_id(), fb::CreatePong(b));
  reply(to, b.Release());
}

void ScriptedServer::answer_hello(uint64_t instance_id, uint64_t max_message_bytes) {
  hello_reply(expect(fb::Body::Hello), instance_id, max_message_bytes);
}

void ScriptedServer::restart() {
  router_.close();
  router_ = zmq::socket_t(context_, zmq::socket_type::router);
  bind(endpoint_);
}

void ScriptedServer::serve_in_background(uint64_t instance_id) {
  background_ = std::thread([this, instance_id] {
    while (!stop_) {
      if (std::optional<Incoming> in = receive(20)) answer(*in, instance_id);
    }
  });
}

void ScriptedServer::answer(const Incoming& in, uint64_t instance_id) {
  switch (in.type()) {
    case fb::Body::Hello:
      return hello_reply(in, instance_id);
    case fb::Body::OpenSession:
      return session_opened(in, 1000 + in.request_id());
    case fb::Body::CloseSession:
      return session_closed(in);
    case fb::Body::Frame:
      return frame_ack(in);
    case fb::Body::Query:
      return result(in, "answer " + std::to_string(in.request_id()));
    case fb::Body::StatsRequest:
      return stats(in);
    case fb::Body::Ping:
      return pong(in);
    default:
      return error(in, fb::ErrorCode::BadRequest, "not a request");
  }
}

}  // namespace kvframe::test
