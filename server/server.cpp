#include "kvframe/server_core/server.h"

#include <signal.h>

#include <cerrno>
#include <optional>
#include <set>
#include <thread>

#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "kvframe/server_core/curve_keys.h"
#include "zap.h"

namespace kvframe::server {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kStatsLogInterval = std::chrono::seconds(10);
// Messages read per wake-up before the replies get their turn.
constexpr int kReadBatch = 256;
// ZMQ_MAXMSGSIZE above the soft limit: room for the rest of the Message.
constexpr int64_t kHardLimitSlack = 64 << 10;
// While serving, the ROUTER lingers 0 (a gone client never holds it up); on
// the way out it gets this long to hand the last replies (ShuttingDown, the
// final Result) to the connections still open.
constexpr auto kFlushOnExit = std::chrono::milliseconds(250);

// Replies from the I/O thread go straight to the client. A client that has
// gone away (ROUTER_MANDATORY: EHOSTUNREACH) or stopped reading (full
// queue: EAGAIN) loses the reply rather than stall everyone else.
class RouterSink : public ReplySink {
 public:
  RouterSink(zmq::socket_t& router, RequestHandler& handler, Log& log) : router_(router), handler_(handler), log_(log) {}
  void send(const std::string& route, flatbuffers::DetachedBuffer message) override {
    send_bytes(route, zmq::message_t(message.data(), message.size()));
  }
  void send_bytes(const std::string& route, zmq::message_t payload) {
    try {
      if (router_.send(zmq::buffer(route), zmq::send_flags::sndmore | zmq::send_flags::dontwait) &&
          router_.send(payload, zmq::send_flags::dontwait)) {
        return;
      }
    } catch (const zmq::error_t& e) {
      if (e.num() != EHOSTUNREACH) log_.warn("send failed", {{"error", e.what()}});
    }
    handler_.stats().count_undeliverable();
    log_.debug("reply undeliverable", {{"route_bytes", std::to_string(route.size())}});
  }

 private:
  zmq::socket_t& router_;
  RequestHandler& handler_;
  Log& log_;
};

// The engine thread hands its replies to the I/O thread (ZeroMQ sockets
// are not thread-safe), in order.
class PushSink : public ReplySink {
 public:
  explicit PushSink(zmq::socket_t& push) : push_(push) {}
  void send(const std::string& route, flatbuffers::DetachedBuffer message) override {
    push_.send(zmq::buffer(route), zmq::send_flags::sndmore);
    push_.send(zmq::buffer(message.data(), message.size()), zmq::send_flags::none);
  }

 private:
  zmq::socket_t& push_;
};

bool interrupted(const zmq::error_t& e) { return e.num() == EINTR; }

std::string hex_bytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// The key the ZAP handler named the connection by, or empty.
std::string user_id(zmq::message_t& message) {
  try {
    const char* id = message.gets("User-Id");
    return id ? id : "";
  } catch (const zmq::error_t&) {
    return "";
  }
}

}  // namespace

bool is_loopback_endpoint(std::string_view endpoint) {
  if (endpoint.rfind("ipc://", 0) == 0 || endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  std::string_view host = endpoint.substr(6);
  host = host.substr(0, host.rfind(':'));
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "[::1]" || host == "::1";
}

struct Server::Impl {
  Impl(Backend& backend, ServerParams p, Log& l)
      : params(std::move(p)), log(l), handler(backend, params.handler, log), context(1),
        router(context, zmq::socket_type::router), replies(context, zmq::socket_type::pull) {}

  void engine_loop();
  Peer peer_of(zmq::message_t& route, zmq::message_t& payload) const;
  void read_requests(RouterSink& door);
  void forward_replies(RouterSink& door);
  void poll_once(RouterSink& door, std::chrono::milliseconds timeout);
  void log_stats();

  ServerParams params;
  Log& log;
  RequestHandler handler;
  zmq::context_t context;
  std::optional<ZapHandler> zap;
  zmq::socket_t router;
  zmq::socket_t replies;
  std::string replies_endpoint;
  std::string endpoint;
  bool curve = false;
  bool loopback = false;
  std::set<std::string> operators;  // Z85 keys
  std::thread engine;
  std::atomic<bool> engine_stop{false};
  std::atomic<bool> engine_done{false};
};

Result<std::unique_ptr<Server>> Server::create(Backend& backend, ServerParams params, Log& log) {
  const bool curve = !params.curve.secret_key.empty();
  if (!curve && !params.insecure_public && !is_loopback_endpoint(params.bind)) {
    return Error{ErrorCode::kServerConfig,
                 "refusing to serve " + params.bind +
                     " unencrypted: anyone who reaches it could drive the model. Give --curve-secret FILE "
                     "(and --curve-allow FILE), bind tcp://127.0.0.1, or pass --insecure-public"};
  }
  std::set<std::string> allowed;
  for (const std::string& key : params.curve.allowed_clients) {
    auto bytes = key_bytes(key);
    if (!bytes) return Error{ErrorCode::kServerConfig, "allowed client key '" + key + "': " + bytes.error().message};
    allowed.insert(*bytes);
  }
  for (const std::string& key : params.curve.operators) {
    if (auto bytes = key_bytes(key); !bytes) {
      return Error{ErrorCode::kServerConfig, "operator key '" + key + "': " + bytes.error().message};
    }
  }
  const std::size_t soft_limit = params.handler.limits.max_message_bytes;
  auto impl = std::make_unique<Impl>(backend, std::move(params), log);
  impl->curve = curve;
  impl->loopback = is_loopback_endpoint(impl->params.bind);
  impl->operators.insert(impl->params.curve.operators.begin(), impl->params.curve.operators.end());
  try {
    if (curve) impl->zap.emplace(impl->context, std::move(allowed), log);
    zmq::socket_t& router = impl->router;
    router.set(zmq::sockopt::router_mandatory, 1);
    // A client that reconnects under its routing id takes it over at once
    // (kvframe's clients keep a random one; ZeroMQ's own cannot be chosen).
    router.set(zmq::sockopt::router_handover, 1);
    router.set(zmq::sockopt::linger, 0);
    router.set(zmq::sockopt::sndhwm, impl->params.high_water_mark);
    router.set(zmq::sockopt::rcvhwm, impl->params.high_water_mark);
    router.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(soft_limit) * 2 + kHardLimitSlack);
    if (curve) {
      router.set(zmq::sockopt::curve_server, 1);
      router.set(zmq::sockopt::curve_secretkey, impl->params.curve.secret_key);
    }
    impl->replies_endpoint = "inproc://kvframe-replies-" + std::to_string(reinterpret_cast<uintptr_t>(impl.get()));
    impl->replies.set(zmq::sockopt::linger, 0);
    impl->replies.set(zmq::sockopt::rcvhwm, 0);  // the engine never blocks on the I/O thread
    impl->replies.bind(impl->replies_endpoint);
  } catch (const zmq::error_t& e) {
    return Error{ErrorCode::kServerConfig, std::string("cannot set up the server socket: ") + e.what()};
  }
  try {
    impl->router.bind(impl->params.bind);
  } catch (const zmq::error_t& e) {
    return Error{ErrorCode::kServerBind, "cannot bind " + impl->params.bind + ": " + e.what() +
                                             " (is another server on that port? use --bind)"};
  }
  impl->endpoint = impl->router.get(zmq::sockopt::last_endpoint);
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  if (!impl_->engine.joinable()) return;
  impl_->engine_stop = true;
  impl_->engine.join();
}

const std::string& Server::endpoint() const { return impl_->endpoint; }
RequestHandler& Server::handler() { return impl_->handler; }
void* Server::zmq_context() { return impl_->context.handle(); }

void Server::Impl::engine_loop() {
  // Signals belong to the I/O thread: an interrupted send here would lose a
  // reply. Threads this one starts (libtorch's) inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  zmq::socket_t push(context, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 0);
  push.set(zmq::sockopt::sndhwm, 0);
  push.connect(replies_endpoint);
  PushSink sink(push);
  while (!engine_stop) handler.run_next(sink, kPollInterval);
  engine_done = true;
}

Peer Server::Impl::peer_of(zmq::message_t& route, zmq::message_t& payload) const {
  Peer peer;
  peer.route = route.to_string();
  if (curve) {
    // Every CURVE connection passed the ZAP handler, which named it by its key.
    const std::string key = user_id(payload);
    peer.principal = "curve:" + key;
    peer.is_operator = !key.empty() && operators.count(key) > 0;
  } else {
    peer.principal = "conn:" + hex_bytes(peer.route);
    peer.is_operator = loopback;
  }
  return peer;
}

void Server::Impl::read_requests(RouterSink& door) {
  for (int i = 0; i < kReadBatch; ++i) {
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(router, std::back_inserter(parts), zmq::recv_flags::dontwait)) return;
    if (parts.size() != 2) {
      // DEALERs send [payload]; the ROUTER adds the routing id. More frames is not our protocol.
      handler.stats().count_error(fb::ErrorCode::Malformed, "");
      door.send(parts.front().to_string(),
                protocol::error_message(0, fb::ErrorCode::Malformed,
                                        "send each Message as one ZeroMQ frame (got " +
                                            std::to_string(parts.size() - 1) + ")"));
      continue;
    }
    handler.on_message(peer_of(parts[0], parts[1]), parts[1].to_string_view(), door);
  }
}

void Server::Impl::forward_replies(RouterSink& door) {
  for (;;) {
    std::vector<zmq::message_t> parts;
    if (!zmq::recv_multipart(replies, std::back_inserter(parts), zmq::recv_flags::dontwait)) return;
    door.send_bytes(parts[0].to_string(), std::move(parts[1]));
  }
}

void Server::Impl::poll_once(RouterSink& door, std::chrono::milliseconds timeout) {
  std::vector<zmq::pollitem_t> items = {{router.handle(), 0, ZMQ_POLLIN, 0}, {replies.handle(), 0, ZMQ_POLLIN, 0}};
  if (zap) items.push_back({zap->socket().handle(), 0, ZMQ_POLLIN, 0});
  try {
    zmq::poll(items, timeout);
    if (items[1].revents & ZMQ_POLLIN) forward_replies(door);
    if (items[0].revents & ZMQ_POLLIN) read_requests(door);
    if (zap && (items[2].revents & ZMQ_POLLIN)) zap->answer();
  } catch (const zmq::error_t& e) {
    if (!interrupted(e)) log.error("socket error", {{"error", e.what()}});
  }
}

void Server::Impl::log_stats() {
  const StatsSnapshot s = handler.stats().snapshot();
  const Scheduler& scheduler = handler.scheduler();
  log.debug("stats", {{"sessions", std::to_string(scheduler.sessions())},
                      {"queue_depth", std::to_string(scheduler.queue_depth())},
                      {"frames", std::to_string(s.counters.frames)},
                      {"superseded", std::to_string(s.counters.frames_superseded)},
                      {"queries", std::to_string(s.counters.queries)},
                      {"errors", std::to_string(s.counters.errors)},
                      {"busy", std::to_string(s.counters.busy_rejected)},
                      {"deadline_missed", std::to_string(s.counters.deadline_missed)},
                      {"undeliverable", std::to_string(s.counters.undeliverable)}});
  const MemoryUse memory = handler.memory_use();
  auto mb = [](uint64_t bytes) { return std::to_string(bytes >> 20); };
  log.debug("memory", {{"resident_mb", mb(memory.resident)},
                       {"weights_mb", mb(memory.weights)},
                       {"session_kv_mb", mb(memory.session_kv)},
                       {"store_mb", mb(memory.store)},
                       {"scratch_mb", mb(memory.scratch)}});
}

bool Server::run() {
  Impl& s = *impl_;
  RouterSink door(s.router, s.handler, s.log);
  std::string modes;
  for (fb::AttentionMode mode : s.params.handler.modes) modes += (modes.empty() ? "" : ",") + std::string(fb::EnumNameAttentionMode(mode));
  s.log.info("listening", {{"endpoint", s.endpoint},
                           {"modes", modes},
                           {"curve", s.params.curve.secret_key.empty() ? "off" : "on"},
                           {"allowed_clients", std::to_string(s.params.curve.allowed_clients.size())},
                           {"max_message_bytes", std::to_string(s.params.handler.limits.max_message_bytes)}});
  s.engine = std::thread([&s] { s.engine_loop(); });
  auto next_stats = Clock::now() + kStatsLogInterval;
  while (!stop_requested_) {
    s.poll_once(door, kPollInterval);
    if (Clock::now() >= next_stats) {
      s.log.flush_suppressed();
      if (s.log.enabled(LogLevel::kDebug)) s.log_stats();
      next_stats = Clock::now() + kStatsLogInterval;
    }
  }

  s.log.info("stopping", {{"queued", std::to_string(s.handler.scheduler().queue_depth())}});
  s.handler.shut_down(door);
  s.engine_stop = true;
  const auto give_up = Clock::now() + s.params.shutdown_grace;
  while (!s.engine_done && Clock::now() < give_up) s.poll_once(door, std::chrono::milliseconds(10));
  s.forward_replies(door);
  s.log_stats();
  s.log.flush_suppressed(/*all=*/true);
  s.router.set(zmq::sockopt::linger, static_cast<int>(kFlushOnExit.count()));
  if (!s.engine_done) {
    s.log.warn("abandoning the running request", {{"grace_ms", std::to_string(s.params.shutdown_grace.count())}});
    s.engine.detach();
    // The context cannot be closed under the running engine, so nothing
    // waits for the linger: give ZeroMQ's I/O thread the time instead.
    s.router.close();
    std::this_thread::sleep_for(kFlushOnExit);
    return false;
  }
  s.engine.join();
  s.log.info("stopped");
  return true;
}

}  // namespace kvframe::server
