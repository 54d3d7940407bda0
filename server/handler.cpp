// The door: what the I/O thread does with each message.
#include "kvframe/server_core/handler.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "replies.h"

namespace kvframe::server {

namespace {

// Session::open's own floor (include/kvframe/runtime_engine/session.h).
constexpr uint32_t kMinContext = 16;

uint64_t random_instance_id() {
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

std::string mode_list(const std::vector<fb::AttentionMode>& modes) {
  std::string out;
  for (fb::AttentionMode mode : modes) out += (out.empty() ? "" : ", ") + std::string(fb::EnumNameAttentionMode(mode));
  return out;
}

// An OpenSession fidelity knob: -1 becomes the server's default; why the value
// is outside the server's range (the knob's, up to its wire_max; NaN is in
// none), naming the field, if it is.
template <class Knob>
std::optional<std::string> resolve_knob(typename Knob::type& value, typename Knob::type server_default) {
  if (value == typename Knob::type(-1)) value = server_default;
  auto bad = common::knob_out_of_range<Knob>(value, Knob::wire_max);
  if (!bad) return std::nullopt;
  return "OpenSession." + *bad + ", or -1 for this server's default (" + common::knob_text(server_default) + ")";
}

// What the backend measured and the caller left unset.
HandlerParams with_backend_estimates(HandlerParams params, const BackendInfo& info) {
  if (params.scheduler.least_query_ms <= 0) params.scheduler.least_query_ms = info.least_query_ms;
  return params;
}

}  // namespace

RequestHandler::RequestHandler(Backend& backend, HandlerParams params, Log& log)
    : backend_(backend),
      params_(with_backend_estimates(std::move(params), backend.info())),
      log_(log),
      scheduler_(params_.scheduler, params_.quotas),
      instance_id_(random_instance_id()) {
  const BackendInfo info = backend_.info();
  model_ = info.model;
  weights_bytes_ = info.weights_bytes;
  dense_weights_bytes_ = info.dense_weights_bytes;
  adapters_ = {info.adapters, info.default_adapter};
  max_context_ = params_.max_context != 0 ? params_.max_context : info.max_context;
  params_.default_context = std::min(params_.default_context, max_context_);
  backend_.set_between_steps([this] { turn_between_steps(); });
}

RequestHandler::~RequestHandler() { backend_.set_between_steps({}); }

Clock::time_point RequestHandler::now() const { return params_.now ? params_.now() : Clock::now(); }

bool RequestHandler::serves(fb::AttentionMode mode) const {
  return std::find(params_.modes.begin(), params_.modes.end(), mode) != params_.modes.end();
}

void RequestHandler::refuse(ReplySink& sink, const std::string& route, const std::string& principal,
                            const RequestError& error) {
  stats_.count_error(error.code, principal);
  log_.warn("request refused", {{"code", protocol::error_code_name(error.code)},
                                {"request", std::to_string(error.request_id)},
                                {"session", hex_id(error.session_id)},
                                {"principal", principal},
                                {"reason", error.message}});
  sink.send(route, protocol::error_message(error.request_id, error.code, error.message, error.session_id));
}

bool RequestHandler::within_rate(const std::string& principal, Clock::time_point now) {
  if (params_.rate.per_second <= 0) return true;
  // Buckets that have filled up again carry no state worth keeping: forget
  // them now and then (at most once a second: the sweep reads them all), so
  // a stream of new connections cannot grow the map.
  if (buckets_.size() > ServerStats::kMaxPrincipals && now - last_sweep_ >= std::chrono::seconds(1)) {
    last_sweep_ = now;
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      const double idle_s = std::chrono::duration<double>(now - it->second.refilled).count();
      it = it->second.tokens + idle_s * params_.rate.per_second >= params_.rate.burst ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, fresh] = buckets_.try_emplace(principal, Bucket{params_.rate.burst, now});
  Bucket& bucket = it->second;
  if (!fresh) {
    const double elapsed_s = std::chrono::duration<double>(now - bucket.refilled).count();
    bucket.tokens = std::min(params_.rate.burst, bucket.tokens + elapsed_s * params_.rate.per_second);
    bucket.refilled = now;
  }
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

void RequestHandler::on_message(const Peer& peer, std::string_view bytes, ReplySink& door) {
  const Clock::time_point received = now();
  if (!within_rate(peer.principal, received)) {
    // Refused unread: a flood costs the server a lookup per message.
    return refuse(door, peer.route, peer.principal,
                  {fb::ErrorCode::QuotaExceeded,
                   "this client sent more than " + std::to_string(static_cast<long>(params_.rate.per_second)) +
                       " messages a second (burst " + std::to_string(static_cast<long>(params_.rate.burst)) +
                       "), its quota: slow down",
                   0, 0});
  }
  std::vector<uint64_t> storage;
  auto parsed = parse_request(protocol::aligned(bytes, storage), params_.limits);
  if (!parsed) return refuse(door, peer.route, peer.principal, parsed.error());
  Request& request = *parsed;
  // Any request the server could read shows its client is still there: the
  // principal's sessions are not idle (HandlerParams::session_idle).
  scheduler_.touch(peer.principal, received);
  if (std::holds_alternative<PingRequest>(request.body)) return door.send(peer.route, replies::pong(request.request_id));
  if (const auto* hello = std::get_if<HelloRequest>(&request.body)) {
    log_.info("hello", {{"client", hello->client_name}, {"principal", peer.principal}});
    return door.send(peer.route, hello_reply(request.request_id));
  }
  if (std::holds_alternative<StatsRequest>(request.body)) return door.send(peer.route, stats_reply(request.request_id, peer));
  if (auto* open = std::get_if<OpenSessionRequest>(&request.body)) {
    if (auto resolved = resolve_open(*open, peer, request.request_id); !resolved.ok()) {
      return refuse(door, peer.route, peer.principal, resolved.error());
    }
  }
  auto admitted = scheduler_.admit(QueuedRequest{peer.route, peer.principal, std::move(request), received}, received);
  if (!admitted) refuse(door, peer.route, peer.principal, admitted.error());
}

RequestStatus RequestHandler::resolve_open(OpenSessionRequest& open, const Peer& peer, uint64_t request_id) const {
  if (!serves(open.config.mode)) {
    return RequestError{fb::ErrorCode::Unsupported,
                        std::string("this server does not serve mode ") + fb::EnumNameAttentionMode(open.config.mode) +
                            "; it serves " + mode_list(params_.modes) + " (kvframe-serve --mode)",
                        request_id, 0};
  }
  uint32_t& context = open.config.context_tokens;
  if (context == 0) context = params_.default_context;
  if (context < kMinContext || context > max_context_) {
    return RequestError{fb::ErrorCode::BadRequest,
                        "OpenSession.context_tokens is " + std::to_string(context) + "; this server takes " +
                            std::to_string(kMinContext) + ".." + std::to_string(max_context_) +
                            " (0: its default, " + std::to_string(params_.default_context) + ")",
                        request_id, 0};
  }
  // Block mode's fidelity knobs: -1 is this server's default.
  std::optional<std::string> bad_knob;
#define KVF_RESOLVE_KNOB(name) \
  if (!bad_knob) bad_knob = resolve_knob<options::knob_##name>(open.config.fidelity.name, params_.fidelity.name);
  KVF_FIDELITY_KNOBS(KVF_RESOLVE_KNOB)
#undef KVF_RESOLVE_KNOB
  if (bad_knob) return RequestError{fb::ErrorCode::BadRequest, *bad_knob, request_id, 0};
  if (auto unknown = resolve_adapter(open.config.adapter)) {
    return RequestError{fb::ErrorCode::UnknownAdapter, *unknown, request_id, 0};
  }
  open.config.cache_scope = cache_scope_of(peer.principal);
  return {};
}

std::optional<std::string> RequestHandler::resolve_adapter(std::string& adapter) const {
  if (adapter.empty()) adapter = adapters_.default_adapter;
  if (adapter == "none") return std::nullopt;
  if (std::find(adapters_.adapters.begin(), adapters_.adapters.end(), adapter) != adapters_.adapters.end()) {
    return std::nullopt;
  }
  std::string loaded;
  for (const std::string& name : adapters_.adapters) loaded += name + ", ";
  return "OpenSession.adapter is '" + adapter + "'; this server has " + loaded +
         "none (the base model) and empty (its default, " + adapters_.default_adapter +
         "); start it with --adapter " + adapter + "=FILE to serve that one";
}

std::string RequestHandler::cache_scope_of(const std::string& principal) const {
  auto group = params_.cache_groups.find(principal);
  return group == params_.cache_groups.end() ? principal : "group:" + group->second;
}

flatbuffers::DetachedBuffer RequestHandler::hello_reply(uint64_t request_id) const {
  const fb::AttentionMode default_mode = serves(fb::AttentionMode::Block) ? fb::AttentionMode::Block
                                                                          : params_.modes.front();
  return replies::hello(request_id, {params_.server_version, model_, &params_.modes, default_mode,
                                     params_.limits.max_message_bytes, max_context_, instance_id_,
                                     &adapters_.adapters, adapters_.default_adapter, session_idle_ms()});
}

uint32_t RequestHandler::session_idle_ms() const {
  const auto ms = std::max<std::chrono::milliseconds::rep>(params_.session_idle.count(), 0);
  return static_cast<uint32_t>(std::min<std::chrono::milliseconds::rep>(ms, UINT32_MAX));
}

MemoryUse RequestHandler::memory_use() const {
  MemoryUse use{weights_bytes_, scheduler_.kv_bytes(), backend_.cache_stats("").bytes};
  const ResidentMemory resident = resident_memory();
  use.resident = resident.total_bytes;
  use.scratch = scratch_bytes(resident, dense_weights_bytes_, use.session_kv, use.store);
  return use;
}

flatbuffers::DetachedBuffer RequestHandler::stats_reply(uint64_t request_id, const Peer& peer) const {
  if (peer.is_operator) {
    const replies::QueueFields queue{static_cast<uint32_t>(scheduler_.sessions()),
                                     static_cast<uint32_t>(scheduler_.queue_depth()),
                                     static_cast<uint32_t>(scheduler_.queue_high_water())};
    return replies::stats(request_id, stats_.snapshot(), queue, backend_.cache_stats(""), memory_use(), true);
  }
  // A client's own figures only: nothing here moves with another's work
  // (the process's resident memory and scratch do: left at 0).
  const replies::QueueFields queue{static_cast<uint32_t>(scheduler_.sessions_of(peer.principal)),
                                   static_cast<uint32_t>(scheduler_.queue_depth_of(peer.principal)), 0};
  const CacheStats cache = backend_.cache_stats(cache_scope_of(peer.principal));
  return replies::stats(request_id, stats_.snapshot_of(peer.principal), queue, cache,
                        {weights_bytes_, scheduler_.kv_bytes_of(peer.principal), cache.bytes}, false);
}

void RequestHandler::shut_down(ReplySink& door) {
  for (const QueuedRequest& item : scheduler_.shut_down()) {
    refuse(door, item.route, item.principal,
           {fb::ErrorCode::ShuttingDown, kShuttingDownMessage, item.request.request_id, session_of(item.request.body)});
  }
}

}  // namespace kvframe::server
