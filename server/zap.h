// The ZAP handler (ZeroMQ RFC 27) that enforces --curve-allow: a CURVE
// client whose public key is not on the list fails the handshake and is
// never served. Polled by the I/O thread.
#pragma once

#include <set>
#include <string>

#include <zmq.hpp>

#include "kvframe/server/log.h"

namespace kvframe::server {

class ZapHandler {
 public:
  // allowed_keys: 32-byte binary public keys. Binds inproc://zeromq.zap.01,
  // which must happen before the server socket binds.
  ZapHandler(zmq::context_t& context, std::set<std::string> allowed_keys, Log& log);
  zmq::socket_t& socket() { return socket_; }
  // Answers one waiting request.
  void answer();

 private:
  zmq::socket_t socket_;
  std::set<std::string> allowed_;
  Log& log_;
};

}  // namespace kvframe::server
