#include "kvframe/server_core/ping.h"

#include <zmq.hpp>

#include <vector>

#include "kvframe/protocol/protocol.h"
#include "kvframe/server_core/curve_keys.h"

namespace kvframe::server {
namespace {

namespace fb = protocol::fb;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kHelloRequestId = 1;

std::string hello_bytes() {
  flatbuffers::FlatBufferBuilder builder;
  protocol::finish_message(builder, kHelloRequestId, fb::CreateHello(builder, builder.CreateString("kvframe-ping")));
  return {reinterpret_cast<const char*>(builder.GetBufferPointer()), builder.GetSize()};
}

}  // namespace

common::Result<PingAnswer, PingError> ping(const PingParams& params) {
  try {
    zmq::context_t context;
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    if (!params.server_public_key.empty()) {
      CurveKeyPair mine{params.client_public_key, params.client_secret_key};
      if (mine.secret_key.empty()) {
        auto fresh = generate_key_pair();
        if (!fresh) return PingError{fresh.error().message};
        mine = *fresh;
      }
      dealer.set(zmq::sockopt::curve_serverkey, params.server_public_key);
      dealer.set(zmq::sockopt::curve_publickey, mine.public_key);
      dealer.set(zmq::sockopt::curve_secretkey, mine.secret_key);
    }
    dealer.connect(params.endpoint);
    const Clock::time_point start = Clock::now();
    const std::string hello = hello_bytes();
    dealer.send(zmq::buffer(hello), zmq::send_flags::dontwait);  // queued until the handshake is done

    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, params.timeout) == 0) {
      return PingError{"no HelloReply from " + params.endpoint + " within " + std::to_string(params.timeout.count()) +
                       " ms: is kvframe-serve running there (and the CURVE keys right)?"};
    }
    zmq::message_t reply;
    if (!dealer.recv(reply, zmq::recv_flags::dontwait)) return PingError{"the reply vanished"};
    std::vector<uint64_t> storage;
    auto message = protocol::decode(protocol::aligned(reply.to_string_view(), storage));
    if (!message) return PingError{"a malformed reply: " + message.error().message};
    if ((*message)->body_type() != fb::Body::HelloReply) {
      return PingError{std::string("answered ") + fb::EnumNameBody((*message)->body_type()) + " to Hello"};
    }
    const fb::HelloReply* hello_reply = (*message)->body_as_HelloReply();
    PingAnswer answer;
    answer.server_version = hello_reply->server_version() ? hello_reply->server_version()->str() : "";
    answer.model = hello_reply->model() ? hello_reply->model()->str() : "";
    answer.instance_id = hello_reply->instance_id();
    answer.round_trip_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    return answer;
  } catch (const zmq::error_t& e) {
    return PingError{std::string("cannot connect to ") + params.endpoint + ": " + e.what()};
  }
}

}  // namespace kvframe::server
