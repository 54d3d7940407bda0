// Fuzz entry point over the server's request handling: the input is a script
// (tests/server/server_fuzz_input.h) of messages from four clients and engine
// steps, run through the real RequestHandler — the door (decode + checks),
// the scheduler and the dispatch — over StateEchoBackend (frames through
// json_blocker, instant answers). After the script the queue is drained, and:
//   - every reply verifies as a Message and carries a reply body
//   - every message got exactly one final reply (Chunks aside), sent back to
//     the client that sent it
//   - Chunks come in order, each followed by the next Chunk or the Result of
//     the same request
//   - nothing is left queued
// Violations print and trap.
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_entry.h"
#include "collected_replies.h"
#include "server_fuzz_input.h"
#include "state_echo_backend.h"

namespace {

using namespace kvframe::server;
using namespace kvframe::server::test;

bool is_reply(fb::Body body) {
  switch (body) {
    case fb::Body::HelloReply:
    case fb::Body::SessionOpened:
    case fb::Body::SessionClosed:
    case fb::Body::FrameAck:
    case fb::Body::Chunk:
    case fb::Body::Result:
    case fb::Body::Error:
    case fb::Body::Stats:
    case fb::Body::Pong:
      return true;
    default:
      return false;
  }
}

void check_replies(const std::vector<Reply>& replies, const std::map<std::string, int>& sent) {
  std::map<std::string, int> answered;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const fb::Message* m = replies[i].message();
    FUZZ_CHECK(m != nullptr, "a reply does not verify");
    FUZZ_CHECK(is_reply(m->body_type()), "a reply carries a request body");
    FUZZ_CHECK(sent.count(replies[i].route) > 0, "a reply went to a client that sent nothing");
    if (m->body_type() != fb::Body::Chunk) {
      ++answered[replies[i].route];
      continue;
    }
    FUZZ_CHECK(i + 1 < replies.size(), "a Chunk is the last reply");
    const fb::Message* next = replies[i + 1].message();
    FUZZ_CHECK(next && next->request_id() == m->request_id() && replies[i + 1].route == replies[i].route,
                 "a Chunk is followed by another request's reply");
    FUZZ_CHECK(next->body_type() == fb::Body::Result ||
                     (next->body_type() == fb::Body::Chunk &&
                      next->body_as_Chunk()->seq() == m->body_as_Chunk()->seq() + 1),
                 "a Chunk is followed by neither the next Chunk nor the Result");
  }
  FUZZ_CHECK(answered == sent, "a message did not get exactly one reply");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Clock::time_point now{};
  StateEchoBackend backend;
  backend.frame_steps = 2;
  std::ostringstream discarded;
  Log log(LogLevel::kError, &discarded);
  RequestHandler handler(backend, fuzz_handler_params([&] { return now; }), log);
  CollectedReplies replies;
  std::map<std::string, int> sent;

  std::size_t at = 0;
  while (at < size) {
    const uint8_t op = data[at++];
    if (op >= kShutDown) {
      handler.shut_down(replies);
    } else if (op >= kRunSteps) {
      const int steps = op & 7;
      for (int i = 0; (steps == 0 || i < steps) && handler.run_next(replies); ++i) {
      }
    } else {
      std::size_t length = 0;
      if (at < size) length = data[at++];
      if (at < size) length |= std::size_t{data[at++]} << 8;
      length = std::min(length, size - at);
      const Peer peer = fuzz_peer(op);
      now += std::chrono::milliseconds(1);
      handler.on_message(peer, std::string_view(reinterpret_cast<const char*>(data + at), length), replies);
      ++sent[peer.route];
      at += length;
    }
  }
  while (handler.run_next(replies)) {
  }
  FUZZ_CHECK(handler.scheduler().queue_depth() == 0, "requests left queued");
  check_replies(replies.all, sent);
  return 0;
}
