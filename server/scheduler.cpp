#include "kvframe/server_core/scheduler.h"

#include <algorithm>

#include "kvframe/common/secure_random.h"

namespace kvframe::server {

namespace {

// Weight of the newest engine time in the moving averages: recent enough to
// follow a change of load, smooth enough that one slow query does not make
// every deadline look unmeetable.
constexpr double kNewestWeight = 0.2;

void fold(double& average, double value) {
  average = average == 0 ? value : average + kNewestWeight * (value - average);
}

RequestError error(fb::ErrorCode code, std::string message, const QueuedRequest& item, uint64_t session_id) {
  return {code, std::move(message), item.request.request_id, session_id};
}

}  // namespace

Scheduler::Scheduler(const SchedulerLimits& limits, const TenantQuotas& quotas) : limits_(limits), quotas_(quotas) {}

uint64_t Scheduler::fresh_session_id() {
  for (;;) {
    const uint64_t id = limits_.session_ids ? limits_.session_ids() : common::secure_random_u64();
    if (id != 0 && sessions_.count(id) == 0) return id;
  }
}

common::Result<uint64_t, RequestError> Scheduler::admit(QueuedRequest item, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  const RequestBody& body = item.request.body;
  if (shutting_down_) {
    return error(fb::ErrorCode::ShuttingDown, kShuttingDownMessage, item, session_of(body));
  }
  if (const auto* open = std::get_if<OpenSessionRequest>(&body)) {
    if (auto room = check_room(nullptr, item, 0); !room.ok()) return room.error();
    if (auto quota = check_open_quota(item, open->config.context_tokens); !quota.ok()) return quota.error();
    const uint64_t kv_bytes =
        limits_.kv_bytes_of ? limits_.kv_bytes_of(open->config.mode, open->config.context_tokens) : 0;
    if (auto memory = check_memory(item, kv_bytes); !memory.ok()) return memory.error();
    const uint64_t id = fresh_session_id();
    Session& session = sessions_[id];
    session.principal = item.principal;
    session.context_tokens = open->config.context_tokens;
    session.kv_bytes = kv_bytes;
    kv_held_ += kv_bytes;
    session.mode = open->config.mode;
    Tenant& tenant = tenants_[item.principal];
    tenant.last_request = now;
    ++tenant.sessions;
    tenant.context_tokens += session.context_tokens;
    tenant.kv_bytes += kv_bytes;
    enqueue(id, session, std::move(item));
    return id;
  }
  const uint64_t id = session_of(body);
  auto found = sessions_.find(id);
  // Another principal's session is answered as if it did not exist: the
  // same code and words, nothing of its state.
  if (found == sessions_.end() || found->second.closing || found->second.principal != item.principal) {
    return error(fb::ErrorCode::UnknownSession,
                 "no open session " + std::to_string(id) +
                     " (closed, never opened, or the server restarted): open a new one",
                 item, id);
  }
  Session& session = found->second;
  if (const auto* frame = std::get_if<FrameRequest>(&body)) {
    if (auto checked = check_frame(session, *frame); !checked.ok()) {
      return error(checked.error().code, checked.error().message, item, id);
    }
    if (auto room = check_room(&session, item, id); !room.ok()) return room.error();
    if (frame->format == fb::FrameFormat::Whole) supersede_frames(session);
    session.latest_frame = frame->frame_number;
    session.has_whole_frame = session.has_whole_frame || frame->format == fb::FrameFormat::Whole;
  } else if (const auto* query = std::get_if<QueryRequest>(&body)) {
    if (auto checked = check_query(session, *query, item, now); !checked.ok()) return checked.error();
    if (auto room = check_room(&session, item, id); !room.ok()) return room.error();
  } else if (std::holds_alternative<CloseSessionRequest>(body)) {
    // Never refused as Busy: it frees what the queues hold. Its quota share
    // goes back now: a client that got SessionClosed may open another at once,
    // before the engine thread has finished with this one.
    session.closing = true;
    forget_session(session);
    session.released = true;
  }
  enqueue(id, session, std::move(item));
  return id;
}

RequestStatus Scheduler::check_frame(const Session& session, const FrameRequest& frame) const {
  if (frame.format != fb::FrameFormat::Whole && !session.has_whole_frame) {
    return RequestError{fb::ErrorCode::OutOfOrder, "a patch before any whole frame: send the whole gamecore first"};
  }
  if (session.latest_frame && frame.frame_number <= *session.latest_frame) {
    return RequestError{fb::ErrorCode::OutOfOrder, "frame " + std::to_string(frame.frame_number) +
                                                       " is not above the last frame sent, " +
                                                       std::to_string(*session.latest_frame) +
                                                       ": frame numbers must increase"};
  }
  return {};
}

RequestStatus Scheduler::check_query(const Session& session, const QueryRequest& query,
                                     const QueuedRequest& item, Clock::time_point now) const {
  const uint64_t id = query.session_id;
  if (!session.latest_frame) {
    return error(fb::ErrorCode::OutOfOrder, "a query before any frame: send the game state first", item, id);
  }
  if (query.spec.frame_number != 0 && query.spec.frame_number != *session.latest_frame) {
    return error(fb::ErrorCode::OutOfOrder,
                 "the query is about frame " + std::to_string(query.spec.frame_number) +
                     " but the last frame sent is " + std::to_string(*session.latest_frame) +
                     " (0 asks about the latest)",
                 item, id);
  }
  if (query.spec.deadline_frame != 0 && *session.latest_frame >= query.spec.deadline_frame) {
    return error(fb::ErrorCode::Deadline,
                 "deadline_frame " + std::to_string(query.spec.deadline_frame) + " has already been sent", item, id);
  }
  if (query.spec.deadline_ms != 0) {
    const double waited = std::chrono::duration<double, std::milli>(now - item.received).count();
    const double expected = waited + queued_work_ms_ + running_work_ms_ + query_estimate(session.mode);
    if (expected > query.spec.deadline_ms) {
      return error(fb::ErrorCode::Deadline,
                   "the answer is expected in " + std::to_string(static_cast<long>(expected)) +
                       " ms (queued work included), past deadline_ms " + std::to_string(query.spec.deadline_ms),
                   item, id);
    }
  }
  return {};
}

RequestStatus Scheduler::check_room(const Session* session, const QueuedRequest& item, uint64_t session_id) const {
  const uint64_t request_id = item.request.request_id;
  if (queued_ >= limits_.max_queue) {
    // How many others wait is theirs to know: the count is not said.
    return RequestError{fb::ErrorCode::Busy, "the server's queue is full: retry later", request_id, session_id};
  }
  if (session && session->queue.size() >= limits_.max_session_queue) {
    return RequestError{fb::ErrorCode::Busy,
                        "this session has " + std::to_string(session->queue.size()) +
                            " requests waiting: wait for replies before sending more",
                        request_id, session_id};
  }
  auto tenant = tenants_.find(item.principal);
  if (tenant != tenants_.end() && tenant->second.queued >= quotas_.queued) {
    return RequestError{fb::ErrorCode::QuotaExceeded,
                        "this client has " + std::to_string(tenant->second.queued) +
                            " requests waiting, its quota: wait for replies before sending more",
                        request_id, session_id};
  }
  return {};
}

RequestStatus Scheduler::check_open_quota(const QueuedRequest& item, uint32_t context_tokens) const {
  Tenant held;
  if (auto tenant = tenants_.find(item.principal); tenant != tenants_.end()) held = tenant->second;
  if (held.sessions >= quotas_.sessions) {
    return RequestError{fb::ErrorCode::QuotaExceeded,
                        "this client has " + std::to_string(held.sessions) +
                            " sessions open, its quota: close one (CloseSession) before opening another",
                        item.request.request_id, 0};
  }
  if (held.context_tokens + context_tokens > quotas_.context_tokens) {
    return RequestError{fb::ErrorCode::QuotaExceeded,
                        "this client's sessions hold " + std::to_string(held.context_tokens) +
                            " context tokens; " + std::to_string(context_tokens) + " more would pass its quota of " +
                            std::to_string(quotas_.context_tokens) +
                            ": ask for fewer OpenSession.context_tokens or close a session",
                        item.request.request_id, 0};
  }
  return {};
}

RequestStatus Scheduler::check_memory(const QueuedRequest& item, uint64_t kv_bytes) const {
  if (limits_.session_kv_bytes == 0 || kv_held_ + kv_bytes <= limits_.session_kv_bytes) return {};
  // What others hold is not said: how full the server is would tell one
  // tenant of another's load.
  return RequestError{fb::ErrorCode::Busy,
                      "the server's memory for sessions (kvframe-serve --max-memory-mb) cannot hold this session's KV (" +
                          std::to_string(kv_bytes >> 20) +
                          " MB) now: ask for fewer OpenSession.context_tokens, or retry after sessions close",
                      item.request.request_id, 0};
}

void Scheduler::dequeued(const QueuedRequest& item) {
  auto tenant = tenants_.find(item.principal);
  if (tenant == tenants_.end()) return;
  if (tenant->second.queued > 0) --tenant->second.queued;
  if (tenant->second.queued == 0 && tenant->second.sessions == 0) tenants_.erase(tenant);
}

void Scheduler::forget_session(const Session& session) {
  kv_held_ -= std::min(kv_held_, session.kv_bytes);
  auto tenant = tenants_.find(session.principal);
  if (tenant == tenants_.end()) return;
  Tenant& t = tenant->second;
  if (t.sessions > 0) --t.sessions;
  t.context_tokens -= std::min<uint64_t>(t.context_tokens, session.context_tokens);
  t.kv_bytes -= std::min(t.kv_bytes, session.kv_bytes);
  if (t.queued == 0 && t.sessions == 0) tenants_.erase(tenant);
}

void Scheduler::touch(const std::string& principal, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto tenant = tenants_.find(principal); tenant != tenants_.end()) tenant->second.last_request = now;
}

std::vector<Scheduler::Expired> Scheduler::expire_idle(Clock::time_point now, std::chrono::milliseconds idle) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Expired> expired;
  for (const auto& [principal, tenant] : tenants_) {
    if (tenant.sessions > 0 && now - tenant.last_request >= idle) expired.push_back({0, principal});
  }
  if (expired.empty()) return {};
  std::vector<Expired> out;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    Session& session = it->second;
    const bool idle_owner = std::any_of(expired.begin(), expired.end(),
                                        [&](const Expired& e) { return e.principal == session.principal; });
    if (!idle_owner || session.running || session.closing) {
      ++it;
      continue;
    }
    for (const QueuedRequest& item : session.queue) {
      queued_work_ms_ = std::max(0.0, queued_work_ms_ - item.expected_ms);
      --queued_;
      dequeued(item);
    }
    if (!session.released) forget_session(session);
    ready_.erase(std::remove(ready_.begin(), ready_.end(), it->first), ready_.end());
    out.push_back({it->first, session.principal});
    it = sessions_.erase(it);
  }
  return out;
}

void Scheduler::supersede_frames(Session& session) {
  for (auto it = session.queue.rbegin(); it != session.queue.rend(); ++it) {
    auto* frame = std::get_if<FrameRequest>(&it->request.body);
    if (!frame) break;  // a Query (or the OpenSession) needs the frames before it
    if (it->superseded) break;  // and so were all before it
    it->superseded = true;
    std::string().swap(frame->json);
    queued_work_ms_ -= it->expected_ms;
    it->expected_ms = 0;
  }
}

double Scheduler::expected_ms(const Session& session, const RequestBody& body) const {
  if (std::holds_alternative<QueryRequest>(body)) return query_estimate(session.mode);
  if (std::holds_alternative<FrameRequest>(body)) return frame_ms_;
  return 0;
}

void Scheduler::enqueue(uint64_t session_id, Session& session, QueuedRequest item) {
  item.expected_ms = expected_ms(session, item.request.body);
  queued_work_ms_ += item.expected_ms;
  ++tenants_[item.principal].queued;
  session.queue.push_back(std::move(item));
  ++queued_;
  high_water_ = std::max(high_water_, queued_);
  if (!session.running && session.queue.size() == 1) {
    catch_up(session.principal, session_id);
    ready_.push_back(session_id);
    work_ready_.notify_one();
  }
}

// One pass over the sessions: this runs whenever a session's queue goes
// from empty to one, which is every frame of a game that keeps up.
void Scheduler::catch_up(const std::string& principal, uint64_t session_id) {
  std::optional<double> least;  // the least-charged busy principal's charge
  for (const auto& [id, s] : sessions_) {
    if (id == session_id || !(s.running || !s.queue.empty())) continue;
    if (s.principal == principal) return;  // already taking turns
    const auto tenant = tenants_.find(s.principal);
    const double charged = tenant == tenants_.end() ? 0 : tenant->second.charged;
    least = std::min(least.value_or(charged), charged);
  }
  constexpr double kHair = 1e-6;  // ms: first among equals
  if (least) tenants_[principal].charged = std::max(tenants_[principal].charged, *least - kHair);
}

std::deque<uint64_t>::iterator Scheduler::next_turn(const std::string& passed_over) {
  auto best = ready_.end();
  double best_charged = 0;
  for (auto it = ready_.begin(); it != ready_.end(); ++it) {
    const std::string& principal = sessions_.at(*it).principal;
    if (principal == passed_over) continue;
    const double charge = charged(principal);
    if (best == ready_.end() || charge < best_charged) best = it, best_charged = charge;
  }
  return best;
}

std::optional<Work> Scheduler::take(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  work_ready_.wait_for(lock, wait, [&] { return shutting_down_ || !ready_.empty(); });
  if (shutting_down_ || ready_.empty()) return std::nullopt;
  return take_turn(next_turn(), limits_.max_batch);
}

std::optional<Work> Scheduler::take_ahead_of(const std::string& running, double running_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (shutting_down_) return std::nullopt;
  const auto turn = next_turn(running);
  if (turn == ready_.end()) return std::nullopt;
  if (charged(sessions_.at(*turn).principal) >= charged(running) + running_ms / weight(running)) return std::nullopt;
  return take_turn(turn, limits_.max_batch);
}

double Scheduler::charged(const std::string& principal) const {
  const auto tenant = tenants_.find(principal);
  return tenant == tenants_.end() ? 0 : tenant->second.charged;
}

double Scheduler::weight(const std::string& principal) const {
  const auto weight = quotas_.weights.find(principal);
  return weight == quotas_.weights.end() ? 1.0 : weight->second;
}

Work Scheduler::take_turn(std::deque<uint64_t>::iterator turn, std::size_t max_batch) {
  const uint64_t id = *turn;
  ready_.erase(turn);
  Session& session = sessions_.at(id);
  session.running = true;
  Work work{id, std::move(session.queue.front()), {}, {session.mode, session.latest_frame, session.applied_frame}};
  session.queue.pop_front();
  --queued_;
  dequeued(work.item);
  if (std::holds_alternative<QueryRequest>(work.item.request.body)) {
    while (work.batch.size() + 1 < max_batch && !session.queue.empty() &&
           std::holds_alternative<QueryRequest>(session.queue.front().request.body)) {
      work.batch.push_back(std::move(session.queue.front()));
      session.queue.pop_front();
      --queued_;
      dequeued(work.batch.back());
    }
  }
  const double expected = expected_of(work);
  running_work_ms_ += expected;
  queued_work_ms_ = std::max(0.0, queued_work_ms_ - expected);
  return work;
}

double Scheduler::expected_of(const Work& work) {
  double ms = work.item.expected_ms;
  for (const QueuedRequest& item : work.batch) ms += item.expected_ms;
  return ms;
}

std::vector<Work> Scheduler::take_companions(std::size_t max) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Work> out;
  for (std::size_t i = 0; i < ready_.size() && out.size() < max;) {
    const Session& session = sessions_.at(ready_[i]);
    if (session.queue.empty() || !std::holds_alternative<QueryRequest>(session.queue.front().request.body)) {
      ++i;
      continue;
    }
    out.push_back(take_turn(ready_.begin() + static_cast<std::ptrdiff_t>(i), 1));  // ready_[i] is now the next
  }
  return out;
}

void Scheduler::requeue_front(Session& session, const QueuedRequest& item) {
  session.queue.push_front(item);
  queued_work_ms_ += item.expected_ms;
  ++tenants_[item.principal].queued;
  ++queued_;
}

std::vector<QueuedRequest> Scheduler::finish(const Work& work, Outcome outcome, double engine_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_work_ms_ = std::max(0.0, running_work_ms_ - expected_of(work));
  const RequestBody& body = work.item.request.body;
  if (outcome == Outcome::kDeferred) {
    // Its engine time so far is a step of encoding, not a query's.
  } else if (std::holds_alternative<QueryRequest>(body) && engine_ms > 0) {
    fold(query_ms_[static_cast<int>(work.session.mode)], engine_ms);
  } else if (outcome == Outcome::kFrameApplied) {
    fold(frame_ms_, engine_ms);
  }
  const uint64_t id = work.session_id;
  auto found = sessions_.find(id);
  if (found == sessions_.end()) return {};
  Session& session = found->second;
  session.running = false;
  if (auto tenant = tenants_.find(session.principal); tenant != tenants_.end()) {
    tenant->second.charged += engine_ms / weight(session.principal);
  }
  if (outcome == Outcome::kDeferred) {
    // The encoding step was their wait's work, not queueing.
    auto deferred = [engine_ms](QueuedRequest item) {
      item.encoding_ms += engine_ms;
      return item;
    };
    for (auto it = work.batch.rbegin(); it != work.batch.rend(); ++it) requeue_front(session, deferred(*it));
    requeue_front(session, deferred(work.item));
  }
  if (outcome == Outcome::kFrameApplied) session.applied_frame = std::get<FrameRequest>(body).frame_number;
  if (outcome == Outcome::kSessionGone) {
    std::vector<QueuedRequest> left(std::make_move_iterator(session.queue.begin()),
                                    std::make_move_iterator(session.queue.end()));
    queued_ -= left.size();
    for (const QueuedRequest& item : left) {
      queued_work_ms_ = std::max(0.0, queued_work_ms_ - item.expected_ms);
      dequeued(item);
    }
    if (!session.released) forget_session(session);
    sessions_.erase(found);
    return left;
  }
  if (!session.queue.empty()) {
    ready_.push_back(id);
    work_ready_.notify_one();
  }
  return {};
}

std::vector<QueuedRequest> Scheduler::shut_down() {
  std::lock_guard<std::mutex> lock(mutex_);
  shutting_down_ = true;
  std::vector<QueuedRequest> left;
  for (auto& [id, session] : sessions_) {
    for (QueuedRequest& item : session.queue) left.push_back(std::move(item));
    session.queue.clear();
  }
  ready_.clear();
  for (auto& [principal, tenant] : tenants_) tenant.queued = 0;
  queued_ = 0;
  queued_work_ms_ = 0;
  work_ready_.notify_all();
  return left;
}

double Scheduler::query_estimate(fb::AttentionMode mode) const {
  const double recent = query_ms_[std::clamp(static_cast<int>(mode), 0, 2)];
  return recent > 0 ? recent : limits_.least_query_ms;
}

double Scheduler::expected_query_ms(fb::AttentionMode mode) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return query_estimate(mode);
}

std::size_t Scheduler::sessions() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sessions_.size();
}

std::size_t Scheduler::queue_depth() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_;
}

std::size_t Scheduler::sessions_of(const std::string& principal) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto tenant = tenants_.find(principal);
  return tenant == tenants_.end() ? 0 : tenant->second.sessions;
}

std::size_t Scheduler::queue_depth_of(const std::string& principal) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto tenant = tenants_.find(principal);
  return tenant == tenants_.end() ? 0 : tenant->second.queued;
}

std::size_t Scheduler::queue_depth_of_session(uint64_t session_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto session = sessions_.find(session_id);
  return session == sessions_.end() ? 0 : session->second.queue.size();
}

uint64_t Scheduler::kv_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return kv_held_;
}

uint64_t Scheduler::kv_bytes_of(const std::string& principal) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto tenant = tenants_.find(principal);
  return tenant == tenants_.end() ? 0 : tenant->second.kv_bytes;
}

std::size_t Scheduler::queue_high_water() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return high_water_;
}

}  // namespace kvframe::server
