// The server without its sockets: bytes from a client in, reply messages out.
// The ZeroMQ loop (server.h) feeds it from the I/O thread and runs its engine
// steps on the engine thread; tests and the fuzz target drive both halves
// from one thread with a fake backend, so what they exercise is the real
// door, scheduler and dispatch.
//
// Every request gets exactly one reply (Chunks before a Result aside):
// Hello→HelloReply, OpenSession→SessionOpened|Error, Frame→FrameAck|Error,
// Query→Chunk* then Result|Error, CloseSession→SessionClosed|Error,
// StatsRequest→Stats, Ping→Pong. Hello, StatsRequest and Ping are answered
// by the I/O thread; everything else about sessions runs on the engine
// thread in order.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "kvframe/server_core/backend.h"
#include "kvframe/server_core/log.h"
#include "kvframe/server_core/scheduler.h"
#include "kvframe/server_core/memory_use.h"
#include "kvframe/server_core/stats.h"

namespace kvframe::server {

// Where replies go: the ROUTER socket on the I/O thread, an inproc socket
// to it on the engine thread, a vector in tests.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void send(const std::string& route, flatbuffers::DetachedBuffer message) = 0;
};

// Who sent a message, as the server's socket knows it (server.h).
struct Peer {
  std::string route;      // the ZeroMQ routing id: where the replies go
  // Whom the message acts for: "curve:<Z85 public key>" when CURVE is on
  // (the key the handshake authenticated), else "conn:<hex routing id>"
  // (the connection; kvframe's clients keep a random one across reconnects).
  std::string principal;
  bool is_operator = false;  // may read the whole server's Stats
};

// Messages one principal may send: a token bucket, refilled at `per_second`
// up to `burst`. Over it: Error{QuotaExceeded}, before the bytes are parsed.
struct RateLimit {
  double per_second = 1000;  // 0: no limit
  double burst = 2000;
};

struct HandlerParams {
  std::vector<fb::AttentionMode> modes = {fb::AttentionMode::Full, fb::AttentionMode::Prefix,
                                          fb::AttentionMode::Block};  // served
  uint32_t default_context = 4096;  // when OpenSession says 0 (capped at max_context)
  // Block mode's fidelity knobs a session gets for each one its OpenSession
  // says -1 for; it may ask for any value in each knob's range up to its
  // wire_max (protocol/options.json).
  common::BlockFidelity fidelity;
  uint32_t max_context = 0;         // 0: the backend's
  // After a frame is applied, when no request waits, encode it at once
  // (Backend::warm) so the game's next query runs only its final block.
  bool warm_frames = true;
  // Tokens of encoding one session gets per engine turn: a frame that needs
  // more (a first frame of thousands of tokens) is encoded a step at a time
  // (Backend::warm_step), its query deferred between steps while other
  // sessions have work, so their answers keep flowing; idle time warms
  // frames a step at a time too. 0: a frame is encoded whole in one turn
  // (kvframe-serve's default is 1024).
  uint32_t step_tokens = 0;
  // Queries of different sessions waiting at once are answered together, up
  // to this many, their answers decoded in one pass a step (1: one session
  // at a time). Each Result goes out as soon as its answer is complete. Off
  // by default: on a 2-core CPU it gained nothing (bench/bench_serving.py),
  // since encoding, not decoding, fills a decision there.
  std::size_t max_sessions_together = 1;
  // A session whose client (its principal) has sent no request the server
  // could read for this long is closed and its queued work dropped: a client
  // that vanished frees its KV. A client still there that has nothing to ask
  // sends Pings (HelloReply.session_idle_ms tells it this). Clients re-open
  // a session the server forgot (and re-send its frames) by themselves.
  // 0: never.
  std::chrono::milliseconds session_idle{0};
  RequestLimits limits;
  SchedulerLimits scheduler;
  TenantQuotas quotas;
  RateLimit rate;
  // Principals whose sessions share one block-store scope (game servers of
  // one studio that trust each other): principal → the group's name. Every
  // other principal has a scope of its own.
  std::map<std::string, std::string> cache_groups;
  std::string server_version = "0.1.0";
  std::function<Clock::time_point()> now;  // empty: steady_clock (tests pass a fake)
};

class RequestHandler {
 public:
  RequestHandler(Backend& backend, HandlerParams params, Log& log);
  ~RequestHandler();
  RequestHandler(const RequestHandler&) = delete;
  RequestHandler& operator=(const RequestHandler&) = delete;

  // I/O thread: one message as received. Refusals, Hello, StatsRequest and
  // Ping are answered on `door` at once; the rest is queued for the engine.
  void on_message(const Peer& peer, std::string_view bytes, ReplySink& door);
  // Engine thread: runs the next queued request (its replies go to `out`),
  // waiting up to `wait` for one. false when there was none.
  bool run_next(ReplySink& out, std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // Any thread: answers everything queued with ShuttingDown on `door`, and
  // every request after it too; run_next() finds nothing from then on.
  void shut_down(ReplySink& door);

  ServerStats& stats() { return stats_; }
  // The whole server's memory, read now (Stats for an operator, the log).
  MemoryUse memory_use() const;
  const Scheduler& scheduler() const { return scheduler_; }

 private:
  Clock::time_point now() const;
  bool serves(fb::AttentionMode mode) const;
  void refuse(ReplySink& sink, const std::string& route, const std::string& principal, const RequestError& error);
  // Takes a token from the principal's bucket; false when it is empty.
  bool within_rate(const std::string& principal, Clock::time_point now);
  // Checks the mode, resolves context_tokens (0: the default) and sets the cache scope.
  RequestStatus resolve_open(OpenSessionRequest& open, const Peer& peer, uint64_t request_id) const;
  std::string cache_scope_of(const std::string& principal) const;  // cache_groups, else its own
  // An OpenSession's adapter name, empty resolved to the default; why it
  // cannot be served, if it cannot.
  std::optional<std::string> resolve_adapter(std::string& adapter) const;
  flatbuffers::DetachedBuffer hello_reply(uint64_t request_id) const;
  uint32_t session_idle_ms() const;  // HelloReply's: params_.session_idle, clamped to the field
  flatbuffers::DetachedBuffer stats_reply(uint64_t request_id, const Peer& peer) const;

  // Closes the sessions whose client fell silent (HandlerParams::session_idle).
  void expire_idle_sessions();
  // A taken request run to its end and finished with the scheduler: a turn
  // of run_next's, or one taken between another's decoding steps.
  Outcome run_work(const Work& work, ReplySink& out);
  // The backend's hook between two decoding steps (Backend::set_between_steps):
  // a request of a principal charged less than the running one's, whose turn
  // came while that answer decoded, runs to its end there. One at a time:
  // never a turn inside a turn.
  void turn_between_steps();
  // Engine-thread steps, one per request kind; each returns how it ended.
  Outcome open_session(const Work& work, ReplySink& out);
  Outcome apply_frame(const Work& work, ReplySink& out);
  Outcome run_query(const Work& work, ReplySink& out);
  // A lone Query and the companions take_companions() gave: one answer of
  // each session, decoded together (Backend::run_across); each companion is
  // finished with the scheduler as its answer goes out.
  // encoded_now_ms: the steps that finished work's frame in this turn.
  void run_across(const Work& work, std::vector<Work> companions, double encoded_now_ms, ReplySink& out);
  RequestStatus check_runnable(const Work& work, const QueuedRequest& item, double queue_ms) const;
  void send_result(ReplySink& out, const Work& work, const QueuedRequest& item, QueryAnswer& answer, double queue_ms,
                   uint32_t batch_size);
  Outcome close_session(const Work& work, ReplySink& out);
  // step_tokens: the taken query's frame encoded a step at a time; false
  // when steps are left and other sessions wait (the query is deferred).
  bool frame_encoded(const Work& work);
  // A frame just applied: warmed now if nothing waits, else listed in
  // warming_ for idle time, unless the session's own next request waits.
  void warm_when_idle(uint64_t session_id);
  // Idle time: one step of the frame of the session that waited longest to be warmed (warming_).
  bool warm_a_step();
  // Best-effort warming (Backend::warm / warm_step); the tokens left.
  uint64_t warm(uint64_t session_id, uint32_t max_tokens);
  void fail(ReplySink& out, const Work& work, fb::ErrorCode code, const std::string& message);

  Backend& backend_;
  HandlerParams params_;
  Log& log_;
  ServerStats stats_;
  Scheduler scheduler_;
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled;
  };
  std::unordered_map<std::string, Bucket> buckets_;  // I/O thread only
  Clock::time_point last_sweep_{};
  std::deque<uint64_t> warming_;  // engine thread only: sessions whose frames idle time goes on encoding
  Clock::time_point next_idle_check_{};  // engine thread only: expiry looks at the sessions once a second
  struct Running {
    ReplySink* out = nullptr;  // where its replies go; null between turns
    std::string principal;
    Clock::time_point started;
    double lent_ms = 0;    // what the turns taken between its steps took: not its engine time
    bool in_turn = false;  // such a turn is running
  } running_;              // engine thread only: the request run_next runs
  uint64_t instance_id_;
  uint32_t max_context_;
  std::string model_;
  uint64_t weights_bytes_ = 0;
  uint64_t dense_weights_bytes_ = 0;
  struct {
    std::vector<std::string> adapters;
    std::string default_adapter;
  } adapters_;  // the backend's, for OpenSession and HelloReply
};

}  // namespace kvframe::server
