// The server fuzz target's input (tests/fuzz/fuzz_server.cpp) and the
// handler settings it runs under, shared with the seed writer
// (make_server_corpus.cpp). An input is a script of records:
//   byte b < 0x80   a message from client b % 4: a 2-byte little-endian
//                   length L, then L bytes (fewer if the input ends first)
//   byte b >= 0xc0  shut the handler down (queued requests: ShuttingDown)
//   byte b >= 0x80  otherwise: run b & 7 engine steps (0: until the queue is empty)
// After the script the engine runs until the queue is empty. The clock is
// fake: it moves 1 ms per message, so deadlines are deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kvframe/server/handler.h"

namespace kvframe::server::test {

inline constexpr uint8_t kRunSteps = 0x80;
inline constexpr uint8_t kShutDown = 0xc0;

// Deterministic session ids and a small size limit (TooLarge is reachable).
inline HandlerParams fuzz_handler_params(std::function<Clock::time_point()> now) {
  HandlerParams params;
  params.scheduler.id_seed = 1;
  params.scheduler.max_queue = 48;
  params.scheduler.max_session_queue = 12;
  params.limits.max_message_bytes = 8192;
  params.limits.max_tokens = 64;
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
