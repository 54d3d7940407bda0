#include "link.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kvframe/common/secure_random.h"

namespace kvframe::client {

namespace {

namespace fb = protocol::fb;

// Socket settings. Heartbeats notice a server that vanished without closing
// the connection (a pulled cable, a frozen VM); reconnects are quick because
// a game wants its NPCs back within a second of the server restarting.
constexpr int kHeartbeatIntervalMs = 1000;
constexpr int kHeartbeatTimeoutMs = 3000;
constexpr int kHeartbeatTtlMs = 6000;
constexpr int kReconnectIntervalMs = 50;
constexpr int kReconnectIntervalMaxMs = 1000;
// A Hello that got no answer (a server still starting) is sent again this often.
constexpr int32_t kHelloRetryMs = 1000;
// kvf_client_close waits this long for the server to close the sessions.
constexpr int32_t kCloseGraceMs = 500;
// Timeouts are checked this often (a scan of the requests in flight).
constexpr int kExpiryScanMs = 10;
// A client holding sessions pings after a third of the server's
// session_idle_ms without sending anything: two pings may come late (a
// reconnect, a loaded machine) before the server's clock runs out. Never
// more often than the floor, whatever a server says.
constexpr uint32_t kPingsPerIdle = 3;
constexpr uint32_t kMinPingIntervalMs = 50;

// Inproc names are per context, and a shared context (kvf_client_params.
// zmq_context) may hold several clients: each link's names carry its address.
std::string inproc_name(const char* what, const void* link) {
  return std::string("inproc://kvframe-client-") + what + "-" + std::to_string(reinterpret_cast<uintptr_t>(link));
}

uint64_t frame_number_of(const RequestSpec& spec) {
  if (auto* frame = std::get_if<FrameSpec>(&spec)) return frame->frame_number;
  if (auto* query = std::get_if<QuerySpec>(&spec)) return query->frame_number;
  return 0;
}

bool is_final(const kvf_event& event) { return event.type != KVF_EVENT_CHUNK; }

}  // namespace

Link::Link(void* context, Shared& shared, LinkSettings settings)
    : shared_(shared),
      settings_(std::move(settings)),
      dealer_(context, zmq::socket_type::dealer),
      monitor_(context, zmq::socket_type::pair),
      wake_receiver_(context, zmq::socket_type::pair) {
  const std::string wake_endpoint = inproc_name("wake", this);
  shared_.wake_sender.bind(wake_endpoint);
  wake_receiver_.connect(wake_endpoint);

  // A server without CURVE knows this client by its routing id. A random
  // one, kept across reconnects, lets the client find its sessions again
  // after a dropped connection and cannot be guessed by another client
  // (ZeroMQ's own ids are a counter). Ids starting with a zero byte are
  // ZeroMQ's.
  std::string routing_id(16, '\0');
  common::secure_random(routing_id.data(), routing_id.size());
  routing_id[0] = static_cast<char>(routing_id[0] | 0x80);
  dealer_.set(zmq::sockopt::routing_id, zmq::buffer(routing_id));
  dealer_.set(zmq::sockopt::linger, 0);
  dealer_.set(zmq::sockopt::immediate, 0);
  dealer_.set(zmq::sockopt::sndhwm, 0);  // never refuse a send: requests are bounded by the game
  dealer_.set(zmq::sockopt::rcvhwm, 0);
  dealer_.set(zmq::sockopt::heartbeat_ivl, kHeartbeatIntervalMs);
  dealer_.set(zmq::sockopt::heartbeat_timeout, kHeartbeatTimeoutMs);
  dealer_.set(zmq::sockopt::heartbeat_ttl, kHeartbeatTtlMs);
  dealer_.set(zmq::sockopt::reconnect_ivl, kReconnectIntervalMs);
  dealer_.set(zmq::sockopt::reconnect_ivl_max, kReconnectIntervalMaxMs);
  if (!settings_.server_public_key.empty()) {
    dealer_.set(zmq::sockopt::curve_serverkey, settings_.server_public_key);
    dealer_.set(zmq::sockopt::curve_publickey, settings_.client_public_key);
    dealer_.set(zmq::sockopt::curve_secretkey, settings_.client_secret_key);
  }
  // The monitor is connected before the DEALER so no connection event is missed.
  const std::string monitor_endpoint = inproc_name("monitor", this);
  if (zmq_socket_monitor(dealer_.handle(), monitor_endpoint.c_str(),
                         ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL) != 0) {
    throw zmq::error_t();
  }
  monitor_.connect(monitor_endpoint);
  dealer_.connect(settings_.endpoint);
}

// ---- the loop -----------------------------------------------------------------

void Link::run() {
  kvf_status code = KVF_ERR_CLOSED;
  std::string why = "the client was closed before the reply came";
  try {
    loop();
  } catch (const std::exception& e) {  // ZeroMQ failed (out of memory, file descriptors)
    code = KVF_ERR_INTERNAL;
    why = std::string("the client's background thread failed: ") + e.what();
  }
  // Take no more, and answer every request taken or still queued.
  {
    std::lock_guard<std::mutex> lock(shared_.commands_mutex);
    shared_.stopped = true;
    for (Request& request : shared_.commands) requests_.emplace(request.id, std::move(request));
    shared_.commands.clear();
  }
  fail_all(code, why);
}

void Link::loop() {
  last_expiry_scan_ = Clock::now();
  // An inproc pipe has no handshake, so the monitor reports none: the link is
  // connected at once (the Hello is retried until a server is bound there).
  if (settings_.endpoint.rfind("inproc://", 0) == 0) on_connected();
  for (;;) {
    zmq::pollitem_t items[] = {{dealer_.handle(), 0, ZMQ_POLLIN, 0},
                               {monitor_.handle(), 0, ZMQ_POLLIN, 0},
                               {wake_receiver_.handle(), 0, ZMQ_POLLIN, 0}};
    const bool timers = !requests_.empty() || closing_;
    zmq::poll(items, 3, timers ? std::chrono::milliseconds(kExpiryScanMs) : until_ping(Clock::now()));
    if (items[2].revents & ZMQ_POLLIN) take_commands();
    if (items[1].revents & ZMQ_POLLIN) on_monitor_event();
    if (items[0].revents & ZMQ_POLLIN) {
      zmq::message_t message;
      while (dealer_.recv(message, zmq::recv_flags::dontwait)) on_message(message);
    }
    const Clock::time_point now = Clock::now();
    if (now - last_expiry_scan_ >= std::chrono::milliseconds(kExpiryScanMs)) {
      last_expiry_scan_ = now;
      expire_requests(now);
    }
    keep_alive(now);
    if (close_done(now)) return;
  }
}

void Link::take_commands() {
  std::vector<Request> commands;
  bool close = false;
  {
    std::lock_guard<std::mutex> lock(shared_.commands_mutex);
    zmq::message_t ignored;
    while (wake_receiver_.recv(ignored, zmq::recv_flags::dontwait)) {
    }
    shared_.wake_pending = false;
    commands.swap(shared_.commands);
    close = shared_.close_requested;
  }
  for (Request& request : commands) {
    const uint64_t id = request.id;
    requests_.emplace(id, std::move(request));
    dispatch(id);
  }
  if (close && !closing_) begin_close();
}

void Link::on_monitor_event() {
  zmq::message_t event;
  zmq::message_t address;
  if (!monitor_.recv(event, zmq::recv_flags::dontwait)) return;
  if (event.more()) (void)monitor_.recv(address, zmq::recv_flags::dontwait);
  if (event.size() < sizeof(uint16_t)) return;
  uint16_t id = 0;
  std::memcpy(&id, event.data(), sizeof id);
  switch (id) {
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
      on_connected();
      break;
    case ZMQ_EVENT_DISCONNECTED:
      on_disconnected();
      break;
    default: {  // a failed handshake: wrong CURVE keys, or not a ZeroMQ server
      std::lock_guard<std::mutex> lock(shared_.info_mutex);
      shared_.link_problem = "the handshake with " + settings_.endpoint +
                             " failed (wrong CURVE keys, or not a kvframe-serve endpoint?)";
      shared_.info_changed.notify_all();
    }
  }
}

void Link::on_message(const zmq::message_t& bytes) {
  auto decoded = protocol::decode(protocol::aligned(std::string_view(bytes.data<char>(), bytes.size()), aligned_copy_),
                                  std::numeric_limits<std::size_t>::max());
  if (!decoded) {
    if (requests_.count(decoded.error().request_id)) {
      fail(decoded.error().request_id, KVF_ERR_MALFORMED, "unreadable reply: " + decoded.error().message);
    }
    return;
  }
  const fb::Message& reply = **decoded;
  const uint64_t id = reply.request_id();
  auto it = requests_.find(id);
  if (it == requests_.end()) {
    // Timed out or failed already. A session opened too late would leak on the server: close it.
    if (const fb::SessionOpened* opened = reply.body_as_SessionOpened()) close_orphan(opened->session_id());
    return;
  }
  // Not on the wire now: a frame waiting to be re-sent, whose copy sent just
  // before the connection dropped reached the restarted server and was
  // refused there (UnknownSession). The re-sent frame gets the real answer.
  if (!it->second.sent) return;
  if (std::holds_alternative<FrameSpec>(it->second.spec) || std::holds_alternative<QuerySpec>(it->second.spec)) {
    on_event_reply(id, reply);
  } else {
    on_session_reply(id, reply);
  }
}

void Link::expire_requests(Clock::time_point now) {
  for (uint64_t id : sorted_request_ids()) {
    auto it = requests_.find(id);
    if (it == requests_.end() || it->second.deadline > now) continue;
    Request& request = it->second;
    if (std::holds_alternative<HelloSpec>(request.spec)) {
      requests_.erase(it);
      if (connected_ && !link_up_) send_internal(0, HelloSpec{settings_.client_name});
      continue;
    }
    auto session = sessions_.find(request.session);
    const std::string why = "no reply within request_timeout_ms (" + std::to_string(settings_.request_timeout_ms) +
                            " ms)" + (link_up_ ? "" : ": the server is unreachable");
    if (std::holds_alternative<OpenSpec>(request.spec) && session != sessions_.end()) {
      if (request.delivery.internal) {
        session->second.reopen_request = 0;
        requests_.erase(it);
        lose(session->second, KVF_ERR_TIMEOUT, "re-opening the session after a server restart timed out");
        continue;
      }
      if (session->second.phase == Phase::Opening) sessions_.erase(session);
    }
    fail(id, KVF_ERR_TIMEOUT, why);
  }
}

void Link::set_ping_interval(uint32_t session_idle_ms) {
  const uint32_t ms = session_idle_ms == 0 ? 0 : std::max(session_idle_ms / kPingsPerIdle, kMinPingIntervalMs);
  ping_interval_ = std::chrono::milliseconds(ms);
}

bool Link::pinging() const { return ping_interval_.count() > 0 && link_up_ && !closing_ && !sessions_.empty(); }

std::chrono::milliseconds Link::until_ping(Clock::time_point now) const {
  if (!pinging()) return std::chrono::milliseconds(-1);
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::ceil<std::chrono::milliseconds>(last_sent_ + ping_interval_ - now));
}

void Link::keep_alive(Clock::time_point now) {
  if (!pinging() || now - last_sent_ < ping_interval_) return;
  put(encode(shared_.next_request_id.fetch_add(1), 0, PingSpec{}));  // its Pong matches no request: dropped
}

// ---- requests -----------------------------------------------------------------

void Link::dispatch(uint64_t id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;  // timed out while it waited
  Request& request = it->second;
  if (closing_) return;               // fails with KVF_ERR_CLOSED when the loop ends
  auto found = sessions_.find(request.session);
  if (std::holds_alternative<CloseSpec>(request.spec) &&
      (!link_up_ || found == sessions_.end() || found->second.phase == Phase::Lost)) {
    // No server session to close, or no server to tell: a restarted one has
    // forgotten it anyway, and a game shutting down should not wait out the
    // request timeout.
    const kvf_session handle = request.session;
    resolve(id, BlockingReply{});
    forget_session(handle);
    return;
  }
  if (!link_up_) {
    waiting_.push_back(id);
    return;
  }
  if (std::holds_alternative<OpenSpec>(request.spec)) {
    sessions_[request.session].params = std::get<OpenSpec>(request.spec);
    send(request);
    return;
  }
  if (request.session == 0) {
    send(request);
    return;
  }
  if (found == sessions_.end()) {
    fail(id, KVF_ERR_UNKNOWN_SESSION, "session " + std::to_string(request.session) + " is closed");
    return;
  }
  Session& session = found->second;
  switch (session.phase) {
    case Phase::Reopening:
      session.held.push_back(id);
      return;
    case Phase::Lost:
      fail(id, KVF_ERR_UNKNOWN_SESSION, session.lost_reason);
      return;
    case Phase::Opening:
    case Phase::Open:
      break;
  }
  if (auto* frame = std::get_if<FrameSpec>(&request.spec)) remember_frame(session, *frame, id);
  send(request);
}

void Link::send(Request& request) {
  auto session = sessions_.find(request.session);
  const bool opening = std::holds_alternative<OpenSpec>(request.spec);
  const uint64_t server_session = (session == sessions_.end() || opening) ? 0 : session->second.server_id;
  put(encode(request.id, server_session, request.spec));
  request.sent = true;
  request.sent_to_session = server_session;
  if (request.first_sent_at == Clock::time_point{}) request.first_sent_at = Clock::now();
}

uint64_t Link::send_internal(kvf_session session, RequestSpec spec) {
  Request request;
  request.id = shared_.next_request_id.fetch_add(1);
  request.session = session;
  request.spec = std::move(spec);
  request.delivery.internal = true;
  request.deadline = std::holds_alternative<HelloSpec>(request.spec) ? deadline_after(kHelloRetryMs)
                                                                     : deadline_after(settings_.request_timeout_ms);
  const uint64_t id = request.id;
  send(requests_.emplace(id, std::move(request)).first->second);
  return id;
}

void Link::deliver(const Request& request, const kvf_event& event) {
  const Delivery& delivery = request.delivery;
  if (delivery.internal) return;
  if (delivery.waiter) {
    if (is_final(event)) delivery.waiter->set_value(BlockingReply{Status{event.error_code, event.text}, 0, {}});
    return;
  }
  if (delivery.callback) {
    delivery.callback(&event, delivery.user);
    return;
  }
  if (event.type == KVF_EVENT_FRAME_ACK) return;  // by design: acks are only for those who ask
  shared_.events.push(event);
}

void Link::finish(uint64_t id, const kvf_event& event) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  const Request request = std::move(it->second);
  requests_.erase(it);
  deliver(request, event);
}

void Link::fail(uint64_t id, kvf_status code, std::string message) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  const kvf_session session = it->second.session;
  const bool closing_session = std::holds_alternative<CloseSpec>(it->second.spec);
  finish(id, error_event(id, session, frame_number_of(it->second.spec), code, std::move(message)));
  if (closing_session) forget_session(session);  // the handle is invalid after kvf_session_close, whatever came back
}

void Link::put(const flatbuffers::DetachedBuffer& bytes) {
  // SNDHWM is 0 (no limit), so a send is only refused when the context is terminating.
  (void)dealer_.send(zmq::const_buffer(bytes.data(), bytes.size()), zmq::send_flags::dontwait);
  last_sent_ = Clock::now();
}

void Link::close_orphan(uint64_t server_session) {
  put(encode(shared_.next_request_id.fetch_add(1), server_session, CloseSpec{}));  // reply dropped
}

void Link::resolve(uint64_t id, BlockingReply reply) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  const Request request = std::move(it->second);
  requests_.erase(it);
  if (request.delivery.waiter) request.delivery.waiter->set_value(std::move(reply));
}

// Replies to Hello, OpenSession, CloseSession and StatsRequest.
void Link::on_session_reply(uint64_t id, const fb::Message& reply) {
  const Request& request = requests_.at(id);
  const kvf_session handle = request.session;
  const bool internal = request.delivery.internal;
  const fb::Error* error = reply.body_as_Error();
  const Status error_status = error ? Status{status_of(error->code()), error_message(*error)} : Status{};
  auto session = sessions_.find(handle);

  if (std::holds_alternative<HelloSpec>(request.spec)) {
    requests_.erase(id);
    if (const fb::HelloReply* hello = reply.body_as_HelloReply()) {
      on_hello(*hello);
    } else {
      std::lock_guard<std::mutex> lock(shared_.info_mutex);
      shared_.link_problem = "the server refused Hello: " + error_status.message;
      shared_.info_changed.notify_all();
    }
    return;
  }
  if (std::holds_alternative<OpenSpec>(request.spec)) {
    const fb::SessionOpened* opened = reply.body_as_SessionOpened();
    if (session == sessions_.end()) {  // closed meanwhile
      if (opened) close_orphan(opened->session_id());
      fail(id, KVF_ERR_CLOSED, "the session was closed while it was being opened");
      return;
    }
    const bool reopen = internal;
    if (reopen) session->second.reopen_request = 0;
    if (!opened) {
      if (reopen) {
        requests_.erase(id);
        lose(session->second, error_status.code,
             "re-opening the session after a server restart failed: " + error_status.message);
      } else {
        sessions_.erase(session);
        resolve(id, BlockingReply{error_status, 0, {}});
      }
      return;
    }
    if (reopen) {
      requests_.erase(id);
      on_reopened(handle, session->second, opened->session_id());
      return;
    }
    session->second.phase = Phase::Open;
    session->second.server_id = opened->session_id();
    {
      std::lock_guard<std::mutex> lock(shared_.sessions_mutex);
      shared_.open_sessions.emplace(handle, std::nullopt);
    }
    resolve(id, BlockingReply{Status{}, opened->session_id(), {}});
    return;
  }
  if (std::holds_alternative<CloseSpec>(request.spec)) {
    // Unknown to the server is closed too (it restarted and the re-open had not happened).
    const bool closed = reply.body_as_SessionClosed() || (error && error->code() == fb::ErrorCode::UnknownSession);
    resolve(id, BlockingReply{closed ? Status{} : error_status, 0, {}});
    forget_session(handle);
    return;
  }
  if (const fb::Stats* stats = reply.body_as_Stats()) {
    resolve(id, BlockingReply{Status{}, 0, stats_to_json(*stats)});
  } else {
    resolve(id, BlockingReply{error ? error_status : Status{KVF_ERR_INTERNAL, "unexpected reply to StatsRequest"},
                              0, {}});
  }
}

// Replies to Frame and Query: events for the caller.
void Link::on_event_reply(uint64_t id, const fb::Message& reply) {
  Request& request = requests_.at(id);
  const double round_trip_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - request.first_sent_at).count();
  const kvf_event event = event_from_reply(reply, request.session, frame_number_of(request.spec), round_trip_ms);
  if (!is_final(event)) {
    deliver(request, event);
    return;
  }
  const kvf_session handle = request.session;
  const uint64_t sent_to = request.sent_to_session;
  auto session = sessions_.find(handle);
  if (event.type == KVF_EVENT_ERROR && session != sessions_.end() && std::holds_alternative<FrameSpec>(request.spec)) {
    forget_refused_frame(session->second, id);
  }
  finish(id, event);
  // The backstop for a restart the connection events did not show: the
  // server no longer knows a session this client has open.
  session = sessions_.find(handle);
  if (event.error_code == KVF_ERR_UNKNOWN_SESSION && session != sessions_.end() &&
      session->second.phase == Phase::Open && session->second.server_id == sent_to) {
    start_reopen(handle, session->second);
  }
}

// ---- closing ------------------------------------------------------------------

void Link::begin_close() {
  closing_ = true;
  close_deadline_ = deadline_after(kCloseGraceMs);
  if (!link_up_) return;
  for (auto& [handle, session] : sessions_) {
    if (session.phase == Phase::Open) send_internal(handle, CloseSpec{});
  }
}

bool Link::close_done(Clock::time_point now) const {
  if (!closing_) return false;
  if (now >= close_deadline_) return true;
  return std::none_of(requests_.begin(), requests_.end(), [](const auto& entry) {
    return entry.second.delivery.internal && std::holds_alternative<CloseSpec>(entry.second.spec);
  });
}

void Link::fail_all(kvf_status code, const std::string& message) {
  for (uint64_t id : sorted_request_ids()) fail(id, code, message);
  waiting_.clear();
  sessions_.clear();
}

Clock::time_point Link::deadline_after(int32_t ms) const {
  return ms > 0 ? Clock::now() + std::chrono::milliseconds(ms) : Clock::time_point::max();
}

std::vector<uint64_t> Link::sorted_request_ids() const {
  std::vector<uint64_t> ids;
  ids.reserve(requests_.size());
  for (const auto& entry : requests_) ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace kvframe::client
