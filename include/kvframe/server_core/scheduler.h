// The session table and the engine's work queue.
//
// Each session has a FIFO of requests; the engine thread takes one request
// per turn, sharing the engine first among principals, then among a
// principal's sessions: the turn goes to the principal with work that has
// been charged the least engine time (divided by its weight), and within it
// to its session that has waited longest (round-robin). So a tenant's share
// does not grow with the sessions it opens, one busy game never starves the
// others, and a session's requests run (and are answered) in arrival order.
// A principal whose sessions had nothing to do is charged, when work comes,
// no less than the least-charged busy one (credit does not pile up while
// idle), and its turn comes first among equals. Everything that can be decided from what was
// enqueued is decided at admission, so a refused request is answered at once:
// unknown or closing session, frame order, a query about a frame never sent,
// a deadline already unmeetable, full queues (Busy).
//
// Latest state wins: a whole Frame supersedes the Frames queued after the
// session's last queued Query. They keep their place (their acks stay in
// order) but their payload is freed and they are never applied.
//
// Tenants: every request acts for a principal (handler.h, Peer). A session
// belongs to the principal that opened it; to any other principal it does not
// exist (the same UnknownSession reply, word for word). Each principal has
// quotas on its sessions, their context tokens and its queued requests.
//
// Thread-safe: the I/O thread admits, the engine thread takes and finishes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvframe/server_core/request.h"

namespace kvframe::server {

using Clock = std::chrono::steady_clock;

inline constexpr char kShuttingDownMessage[] = "the server is stopping; the request was not run";

struct QueuedRequest {
  std::string route;      // the ZeroMQ routing id of the connection that sent it
  std::string principal;  // whom it acts for (Peer::principal)
  Request request;
  Clock::time_point received;
  double expected_ms = 0;   // the engine time expected for it when admitted
  bool superseded = false;  // a Frame that a newer whole Frame replaced
  double encoding_ms = 0;   // a Query's: engine time its frame's encoding took while it was deferred
};

struct SchedulerLimits {
  std::size_t max_queue = 1024;         // requests waiting, all sessions together
  std::size_t max_session_queue = 256;  // requests waiting in one session
  std::size_t max_batch = 32;           // queries of one session taken together (1: one at a time)
  // A query's expected engine time before any has finished (0: none known):
  // a cold server still refuses a deadline it cannot meet, before any work.
  double least_query_ms = 0;
  // KV memory all open sessions together may hold (0: no limit; kvframe-serve
  // --max-memory-mb less the weights and the block store), and the most a
  // session of a mode and context comes to hold (Engine::max_session_kv_bytes;
  // empty: nothing counted): an OpenSession the limit cannot hold gets
  // Error{Busy}, never an OOM kill.
  uint64_t session_kv_bytes = 0;
  std::function<uint64_t(fb::AttentionMode, uint32_t)> kv_bytes_of;
  // Session ids; empty: 64 bits from the OS's CSPRNG (common/secure_random.h).
  // Tests and the fuzz target pass a deterministic source.
  std::function<uint64_t()> session_ids;
};

// What one principal may hold at once; over it: Error{QuotaExceeded}.
struct TenantQuotas {
  std::size_t sessions = 64;           // open sessions
  uint64_t context_tokens = 1u << 18;  // context_tokens of its open sessions, summed (KV memory)
  std::size_t queued = 512;            // requests waiting, all its sessions
  // Shares of the engine by principal (default 1): a principal of weight 2
  // gets twice the engine time of one of weight 1 when both have work.
  std::unordered_map<std::string, double> weights;
};

// What the engine thread needs to know about a request's session.
struct SessionView {
  fb::AttentionMode mode = fb::AttentionMode::Block;
  std::optional<uint64_t> latest_frame;   // the newest frame number enqueued
  std::optional<uint64_t> applied_frame;  // the frame the engine holds now
};

struct Work {
  uint64_t session_id = 0;  // OpenSession included: the id it was given
  QueuedRequest item;
  // When item is a Query: the Queries queued right behind it in its session
  // (no Frame between, so all are about the same frame), taken with it up to
  // max_batch in all, to be decoded as one batch (many NPCs, one state).
  std::vector<QueuedRequest> batch;
  SessionView session;
};

// How a taken request ended, for the session's state and the time estimates.
// kDeferred: not run yet (a step of its frame's encoding ran instead): the
// request and its batch go back to the front of the session's queue and the
// session to the back of the turn order, so every other session's turn
// comes first.
enum class Outcome { kDone, kFrameApplied, kSessionGone, kDeferred };

class Scheduler {
 public:
  Scheduler(const SchedulerLimits& limits, const TenantQuotas& quotas);

  // Enqueues the request or says why not. OpenSession gets its session a
  // fresh random id (returned); other requests return their session's id.
  common::Result<uint64_t, RequestError> admit(QueuedRequest item, Clock::time_point now);

  // The next request by round-robin, waiting up to `wait` for one (with the
  // queries batched behind it); nothing when none came or after shut_down().
  // The session is busy until finish().
  std::optional<Work> take(std::chrono::milliseconds wait);
  // While a request of principal `running` runs (between two decoding steps
  // of its query, `running_ms` of engine time into it): the next request as
  // take() would give it, if that is another principal's charged less than
  // `running` with that time counted — one whose turn came while `running`'s
  // answer was still decoding. Never waits.
  std::optional<Work> take_ahead_of(const std::string& running, double running_ms);
  // After take() gave a Query alone (no batch behind it): up to `max` other
  // sessions whose next request is a Query too, each taken as take() would
  // (the session busy until finish()), in turn order — their answers then
  // decode together with it. Never waits.
  std::vector<Work> take_companions(std::size_t max);
  // After a taken request: engine_ms feeds the time estimates. kSessionGone
  // (closed, or failed to open) drops the session and returns what was
  // still queued for it.
  std::vector<QueuedRequest> finish(const Work& work, Outcome outcome, double engine_ms);

  // The principal sent a request now (any kind the server could read,
  // queued or not): its sessions are not idle. Nothing for a principal with
  // no sessions or queued requests (no state is kept for it).
  void touch(const std::string& principal, Clock::time_point now);
  // Sessions whose owner has sent no request for `idle` and that run
  // nothing now: forgotten, with the requests they had queued (dropped
  // unanswered: their client is gone). Returns each one's id and owner, for
  // the engine to close.
  struct Expired {
    uint64_t session_id;
    std::string principal;
  };
  std::vector<Expired> expire_idle(Clock::time_point now, std::chrono::milliseconds idle);

  // Refuses new requests from now on (ShuttingDown), wakes take() and
  // returns every queued request, for the caller to answer.
  std::vector<QueuedRequest> shut_down();

  // Engine time expected for a query in this mode (a moving average of the
  // recent ones; before the first, limits.least_query_ms).
  double expected_query_ms(fb::AttentionMode mode) const;
  std::size_t sessions() const;
  std::size_t queue_depth() const;
  std::size_t queue_high_water() const;
  // One principal's share: its open sessions and queued requests.
  std::size_t sessions_of(const std::string& principal) const;
  std::size_t queue_depth_of(const std::string& principal) const;
  // Requests queued for one session (0 for one not open).
  std::size_t queue_depth_of_session(uint64_t session_id) const;
  // The most KV the open sessions may come to hold (limits.kv_bytes_of),
  // all of them or one principal's.
  uint64_t kv_bytes() const;
  uint64_t kv_bytes_of(const std::string& principal) const;

 private:
  struct Session {
    std::string principal;  // its owner
    uint32_t context_tokens = 0;
    uint64_t kv_bytes = 0;  // counted against SchedulerLimits::session_kv_bytes
    fb::AttentionMode mode = fb::AttentionMode::Block;
    std::deque<QueuedRequest> queue;
    std::optional<uint64_t> latest_frame;
    std::optional<uint64_t> applied_frame;
    bool has_whole_frame = false;  // enqueued: a patch needs one before it
    bool closing = false;
    bool released = false;  // its tenant's share given back when the close was admitted
    bool running = false;
  };

  RequestStatus check_frame(const Session& session, const FrameRequest& frame) const;
  RequestStatus check_query(const Session& session, const QueryRequest& query,
                            const QueuedRequest& item, Clock::time_point now) const;
  struct Tenant {
    std::size_t sessions = 0, queued = 0;
    uint64_t context_tokens = 0;
    uint64_t kv_bytes = 0;
    Clock::time_point last_request;  // idle expiry counts from it (touch)
    double charged = 0;  // engine ms it was charged, over its weight: whose turn it is
  };
  // A principal whose work starts again is charged at least what the
  // least-charged busy principal is, less a hair: its turn comes first.
  void catch_up(const std::string& principal, uint64_t session_id);
  // The ready session whose turn it is (an iterator into ready_), among
  // the sessions of principals other than `passed_over`; end() if none.
  std::deque<uint64_t>::iterator next_turn(const std::string& passed_over = {});
  // Takes that session's next request and, up to max_batch in all, the
  // queries batched behind it; the session runs until finish().
  Work take_turn(std::deque<uint64_t>::iterator turn, std::size_t max_batch);
  double charged(const std::string& principal) const;  // 0 for one with nothing held
  double weight(const std::string& principal) const;   // quotas_.weights, else 1
  static double expected_of(const Work& work);  // its requests' expected engine time

  RequestStatus check_room(const Session* session, const QueuedRequest& item, uint64_t session_id) const;
  RequestStatus check_open_quota(const QueuedRequest& item, uint32_t context_tokens) const;
  RequestStatus check_memory(const QueuedRequest& item, uint64_t kv_bytes) const;
  // After a request left a session's queue (taken, dropped or shut down).
  void dequeued(const QueuedRequest& item);
  void forget_session(const Session& session);  // its tenant's share; drops an idle tenant
  void supersede_frames(Session& session);
  void requeue_front(Session& session, const QueuedRequest& item);  // a deferred request back in its place
  double expected_ms(const Session& session, const RequestBody& body) const;
  double query_estimate(fb::AttentionMode mode) const;  // caller holds mutex_
  void enqueue(uint64_t session_id, Session& session, QueuedRequest item);
  uint64_t fresh_session_id();

  SchedulerLimits limits_;
  TenantQuotas quotas_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::unordered_map<uint64_t, Session> sessions_;
  std::deque<uint64_t> ready_;  // sessions with queued work and none running, in turn order
  std::size_t queued_ = 0;
  uint64_t kv_held_ = 0;  // the open sessions' kv_bytes, summed
  std::size_t high_water_ = 0;
  double queued_work_ms_ = 0;   // expected engine time of everything queued
  double running_work_ms_ = 0;  // ... and of the requests being run
  double query_ms_[3] = {0, 0, 0};  // moving average of engine time per attention mode
  double frame_ms_ = 0;
  bool shutting_down_ = false;
  std::unordered_map<std::string, Tenant> tenants_;  // principals with sessions or queued requests
};

}  // namespace kvframe::server
