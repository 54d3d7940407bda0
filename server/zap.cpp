#include "zap.h"

#include <string_view>
#include <vector>

#include <zmq_addon.hpp>

namespace kvframe::server {

namespace {

// Request frames: version, request id, domain, address, identity, mechanism, credentials...
constexpr std::size_t kRequestId = 1, kAddress = 3, kMechanism = 5, kCredentials = 6;
constexpr std::size_t kKeyBytes = 32;  // a CURVE public key

}  // namespace

ZapHandler::ZapHandler(zmq::context_t& context, std::set<std::string> allowed_keys, Log& log)
    : socket_(context, zmq::socket_type::rep), allowed_(std::move(allowed_keys)), log_(log) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");
}

void ZapHandler::answer() {
  std::vector<zmq::message_t> request;
  if (!zmq::recv_multipart(socket_, std::back_inserter(request), zmq::recv_flags::dontwait)) return;
  const auto frame = [&](std::size_t i) { return i < request.size() ? request[i].to_string() : std::string(); };
  const std::string key = frame(kCredentials);
  const bool curve = frame(kMechanism) == "CURVE" && key.size() == kKeyBytes;
  const bool allowed = curve && (allowed_.empty() || allowed_.count(key) > 0);
  if (!allowed) log_.warn("client key refused", {{"address", frame(kAddress)}, {"mechanism", frame(kMechanism)}});
  char user_id[kKeyBytes * 5 / 4 + 1] = {};
  if (allowed) zmq_z85_encode(user_id, reinterpret_cast<const uint8_t*>(key.data()), key.size());
  const std::string request_id = frame(kRequestId);
  std::vector<zmq::const_buffer> reply = {zmq::str_buffer("1.0"), zmq::buffer(request_id),
                                          allowed ? zmq::str_buffer("200") : zmq::str_buffer("400"),
                                          allowed ? zmq::str_buffer("OK") : zmq::str_buffer("key not allowed"),
                                          zmq::buffer(std::string_view(user_id)), zmq::str_buffer("")};
  zmq::send_multipart(socket_, reply);
}

}  // namespace kvframe::server
