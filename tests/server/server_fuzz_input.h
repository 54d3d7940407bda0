// The server fuzz target's input (tests/fuzz/fuzz_server.cpp) and the
// handler settings it runs under, shared with the seed writer
// (make_server_corpus.cpp). An input is a script of records:
//   byte b < 0x80   a message from client b % 4 (fuzz_peer: each its own
//                   principal): a 2-byte little-endian length L, then L
//                   bytes (fewer if the input ends first)
//   byte b >= 0xc0  shut the handler down (queued requests: ShuttingDown)
//   byte b >= 0x80  otherwise: run b & 7 engine steps (0: until the queue is empty)
// After the script the engine runs until the queue is empty. The clock is
// fake: it moves 1 ms per message, so deadlines are deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kvframe/server_core/handler.h"

namespace kvframe::server::test {

inline constexpr uint8_t kRunSteps = 0x80;
inline constexpr uint8_t kShutDown = 0xc0;

// Deterministic session ids (splitmix64 from a seed) for tests, where the
// server draws them from the OS's CSPRNG.
inline std::function<uint64_t()> test_session_ids(uint64_t seed) {
  return [state = seed]() mutable {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
}

// Client n of a script: its own principal; client 0 is an operator.
inline Peer fuzz_peer(uint8_t client) {
  const std::string route = "client-" + std::to_string(client % 4);
  return Peer{route, "conn:" + route, client % 4 == 0};
}

// Deterministic session ids, a small size limit (TooLarge is reachable),
// small quotas (QuotaExceeded is too), and queries of several sessions
// answered together (run_across and take_companions are exercised).
inline HandlerParams fuzz_handler_params(std::function<Clock::time_point()> now) {
  HandlerParams params;
  params.scheduler.session_ids = test_session_ids(1);
  params.quotas.sessions = 6;
  params.quotas.context_tokens = 1u << 16;
  params.quotas.queued = 24;
  params.rate = {1000, 200};
  params.scheduler.max_queue = 48;
  params.scheduler.max_session_queue = 12;
  params.limits.max_message_bytes = 8192;
  params.limits.max_tokens = 64;
  params.max_sessions_together = 4;
  params.step_tokens = 64;  // with StateEchoBackend::frame_steps: queries deferred between a frame's steps
  params.now = std::move(now);
  return params;
}

inline void append_message(std::string& script, uint8_t client, std::string_view message) {
  script += static_cast<char>(client % 4);
  script += static_cast<char>(message.size() & 0xff);
  script += static_cast<char>((message.size() >> 8) & 0xff);
  script += message.substr(0, 0xffff);
}

inline void append_steps(std::string& script, uint8_t steps) { script += static_cast<char>(kRunSteps | (steps & 7)); }
inline void append_shut_down(std::string& script) { script += static_cast<char>(kShutDown); }

}  // namespace kvframe::server::test
