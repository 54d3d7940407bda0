// The server without its sockets: bytes from a client in, reply messages out.
// The ZeroMQ loop (server.h) feeds it from the I/O thread and runs its engine
// steps on the engine thread; tests and the fuzz target drive both halves
// from one thread with a fake backend, so what they exercise is the real
// door, scheduler and dispatch.
//
// Every request gets exactly one reply (Chunks before a Result aside):
// Hello→HelloReply, OpenSession→SessionOpened|Error, Frame→FrameAck|Error,
// Query→Chunk* then Result|Error, CloseSession→SessionClosed|Error,
// StatsRequest→Stats. Hello and StatsRequest are answered by the I/O thread;
// everything else about sessions runs on the engine thread in order.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "kvframe/server/backend.h"
#include "kvframe/server/log.h"
#include "kvframe/server/scheduler.h"
#include "kvframe/server/stats.h"

namespace kvframe::server {

// Where replies go: the ROUTER socket on the I/O thread, an inproc socket
// to it on the engine thread, a vector in tests.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void send(const std::string& route, flatbuffers::DetachedBuffer message) = 0;
};

struct HandlerParams {
  std::vector<fb::AttentionMode> modes = {fb::AttentionMode::Full, fb::AttentionMode::Prefix,
                                          fb::AttentionMode::Block};  // served
  uint32_t default_context = 4096;  // when OpenSession says 0 (capped at max_context)
  uint32_t max_context = 0;         // 0: the backend's
  RequestLimits limits;
  SchedulerLimits scheduler;
  std::string server_version = "0.1.0";
  std::function<Clock::time_point()> now;  // empty: steady_clock (tests pass a fake)
};

class RequestHandler {
 public:
  RequestHandler(Backend& backend, HandlerParams params, Log& log);

  // I/O thread: one message as received. Refusals, Hello and StatsRequest
  // are answered on `door` at once; the rest is queued for the engine.
  void on_message(const std::string& route, std::string_view bytes, ReplySink& door);
  // Engine thread: runs the next queued request (its replies go to `out`),
  // waiting up to `wait` for one. false when there was none.
  bool run_next(ReplySink& out, std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Any thread: answers everything queued with ShuttingDown on `door`, and
  // every request after it too; run_next() finds nothing from then on.
  void shut_down(ReplySink& door);

  ServerStats& stats() { return stats_; }
  const Scheduler& scheduler() const { return scheduler_; }

 private:
  Clock::time_point now() const;
  bool serves(fb::AttentionMode mode) const;
  void refuse(ReplySink& sink, const std::string& route, const RequestError& error);
  // Checks the mode and resolves context_tokens (0: the default).
  std::optional<RequestError> resolve_open(OpenSessionRequest& open, uint64_t request_id) const;
  flatbuffers::DetachedBuffer hello_reply(uint64_t request_id) const;
  flatbuffers::DetachedBuffer stats_reply(uint64_t request_id) const;

  // Engine-thread steps, one per request kind; each returns how it ended.
  Outcome open_session(const Work& work, ReplySink& out);
  Outcome apply_frame(const Work& work, ReplySink& out);
  Outcome run_query(const Work& work, ReplySink& out);
  std::optional<RequestError> unrunnable(const Work& work, const QueuedRequest& item, double queue_ms) const;
  void send_result(ReplySink& out, const Work& work, const QueuedRequest& item, QueryAnswer& answer, double queue_ms,
                   uint32_t batch_size);
  Outcome close_session(const Work& work, ReplySink& out);
  void fail(ReplySink& out, const Work& work, fb::ErrorCode code, const std::string& message);

  Backend& backend_;
  HandlerParams params_;
  Log& log_;
  ServerStats stats_;
  Scheduler scheduler_;
  uint64_t instance_id_;
  uint32_t max_context_;
  std::string model_;
};

}  // namespace kvframe::server
