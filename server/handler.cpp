// The door: what the I/O thread does with each message.
#include "kvframe/server/handler.h"

#include <algorithm>
#include <random>

#include "replies.h"

namespace kvframe::server {

namespace {

// Session::open's own floor (include/kvframe/runtime/session.h).
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

}  // namespace

RequestHandler::RequestHandler(Backend& backend, HandlerParams params, Log& log)
    : backend_(backend),
      params_(std::move(params)),
      log_(log),
      scheduler_(params_.scheduler),
      instance_id_(random_instance_id()) {
  const BackendInfo info = backend_.info();
  model_ = info.model;
  max_context_ = params_.max_context != 0 ? params_.max_context : info.max_context;
  params_.default_context = std::min(params_.default_context, max_context_);
}

Clock::time_point RequestHandler::now() const { return params_.now ? params_.now() : Clock::now(); }

bool RequestHandler::serves(fb::AttentionMode mode) const {
  return std::find(params_.modes.begin(), params_.modes.end(), mode) != params_.modes.end();
}

void RequestHandler::refuse(ReplySink& sink, const std::string& route, const RequestError& error) {
  stats_.count_error(error.code);
  log_.warn("request refused", {{"code", protocol::error_code_name(error.code)},
                                {"request", std::to_string(error.request_id)},
                                {"session", hex_id(error.session_id)},
                                {"reason", error.message}});
  sink.send(route, protocol::error_message(error.request_id, error.code, error.message, error.session_id));
}

void RequestHandler::on_message(const std::string& route, std::string_view bytes, ReplySink& door) {
  const Clock::time_point received = now();
  std::vector<uint64_t> storage;
  auto parsed = parse_request(protocol::aligned(bytes, storage), params_.limits);
  if (!parsed) return refuse(door, route, parsed.error());
  Request& request = *parsed;
  if (const auto* hello = std::get_if<HelloRequest>(&request.body)) {
    log_.info("hello", {{"client", hello->client_name}});
    return door.send(route, hello_reply(request.request_id));
  }
  if (std::holds_alternative<StatsRequest>(request.body)) return door.send(route, stats_reply(request.request_id));
  if (auto* open = std::get_if<OpenSessionRequest>(&request.body)) {
    if (auto refused = resolve_open(*open, request.request_id)) return refuse(door, route, *refused);
  }
  auto admitted = scheduler_.admit(QueuedRequest{route, std::move(request), received}, received);
  if (!admitted) refuse(door, route, admitted.error());
}

std::optional<RequestError> RequestHandler::resolve_open(OpenSessionRequest& open, uint64_t request_id) const {
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
  return std::nullopt;
}

flatbuffers::DetachedBuffer RequestHandler::hello_reply(uint64_t request_id) const {
  const fb::AttentionMode default_mode = serves(fb::AttentionMode::Block) ? fb::AttentionMode::Block
                                                                          : params_.modes.front();
  return replies::hello(request_id, {params_.server_version, model_, &params_.modes, default_mode,
                                     params_.limits.max_message_bytes, max_context_, instance_id_});
}

flatbuffers::DetachedBuffer RequestHandler::stats_reply(uint64_t request_id) const {
  const replies::QueueFields queue{static_cast<uint32_t>(scheduler_.sessions()),
                                   static_cast<uint32_t>(scheduler_.queue_depth()),
                                   static_cast<uint32_t>(scheduler_.queue_high_water())};
  return replies::stats(request_id, stats_.snapshot(), queue, backend_.cache_stats());
}

void RequestHandler::shut_down(ReplySink& door) {
  for (const QueuedRequest& item : scheduler_.shut_down()) {
    refuse(door, item.route,
           {fb::ErrorCode::ShuttingDown, kShuttingDownMessage, item.request.request_id, session_of(item.request.body)});
  }
}

}  // namespace kvframe::server
