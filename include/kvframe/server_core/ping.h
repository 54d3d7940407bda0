// A health probe: is a kvframe-serve answering? Connects a DEALER to the
// endpoint, sends Hello and waits for the HelloReply — the server's own
// answer, so a process that listens but whose engine cannot serve, or a
// load balancer with no live worker behind it, fails it. Kubernetes runs it
// as the readiness and liveness probe (`kvframe-serve --ping`, docs/deploy.md).
//
//   auto answer = ping({"tcp://127.0.0.1:5555"});
//   if (answer) std::cout << answer->model;      // else answer.error().message
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "kvframe/common/result.h"

namespace kvframe::server {

struct PingParams {
  std::string endpoint;
  std::chrono::milliseconds timeout{2000};
  // CURVE, when the server encrypts: its public key, and this client's key
  // pair (Z85); without a client pair a fresh one is made (a server with an
  // allow-list refuses it: give one of the allowed pairs).
  std::string server_public_key, client_public_key, client_secret_key;
};

struct PingAnswer {
  std::string server_version, model;
  uint64_t instance_id = 0;
  double round_trip_ms = 0;
};

struct PingError {
  std::string message;  // what failed, and what to check
};

common::Result<PingAnswer, PingError> ping(const PingParams& params);

}  // namespace kvframe::server
