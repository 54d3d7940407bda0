// The ZAP handler (ZeroMQ RFC 27), installed whenever CURVE is on. It
// enforces --curve-allow (a key not on a non-empty list fails the handshake
// and is never served) and names every connection by the public key the
// handshake authenticated: the key comes back as the messages' "User-Id"
// property, which the server makes the request's principal. Polled by the
// I/O thread.
#pragma once

#include <set>
#include <string>

#include <zmq.hpp>

#include "kvframe/server_core/log.h"

namespace kvframe::server {

class ZapHandler {
 public:
  // allowed_keys: 32-byte binary public keys; empty: every key. Binds
  // inproc://zeromq.zap.01, which must happen before the server socket binds.
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
