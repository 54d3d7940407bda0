#include "zap.h"

#include <vector>

#include <zmq_addon.hpp>

namespace kvframe::server {

namespace {

// Request frames: version, request id, domain, address, identity, mechanism, credentials...
constexpr std::size_t kRequestId = 1, kAddress = 3, kMechanism = 5, kCredentials = 6;

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
  const bool allowed = frame(kMechanism) == "CURVE" && allowed_.count(frame(kCredentials)) > 0;
  if (!allowed) log_.warn("client key refused", {{"address", frame(kAddress)}, {"mechanism", frame(kMechanism)}});
  const std::string request_id = frame(kRequestId);
  std::vector<zmq::const_buffer> reply = {zmq::str_buffer("1.0"), zmq::buffer(request_id),
                                          allowed ? zmq::str_buffer("200") : zmq::str_buffer("400"),
                                          allowed ? zmq::str_buffer("OK") : zmq::str_buffer("key not allowed"),
                                          zmq::str_buffer(""), zmq::str_buffer("")};
  zmq::send_multipart(socket_, reply);
}

}  // namespace kvframe::server
