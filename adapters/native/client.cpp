#include "client.h"

namespace kvframe::client {

namespace {

std::string text_or(const char* text, const char* fallback) { return text ? text : fallback; }

LinkSettings settings_from(const kvf_client_params& p) {
  LinkSettings settings;
  settings.endpoint = text_or(p.endpoint, "");
  settings.client_name = text_or(p.client_name, "kvframe-client");
  settings.request_timeout_ms = p.request_timeout_ms;
  settings.server_public_key = text_or(p.server_public_key, "");
  settings.client_public_key = text_or(p.client_public_key, "");
  settings.client_secret_key = text_or(p.client_secret_key, "");
  return settings;
}

Status check_params(const kvf_client_params& p) {
  if (!p.endpoint || !*p.endpoint) return {KVF_ERR_INVALID_ARGUMENT, "params.endpoint is empty"};
  if (p.connect_timeout_ms < 0 || p.request_timeout_ms < 0) {
    return {KVF_ERR_INVALID_ARGUMENT, "connect_timeout_ms and request_timeout_ms must be >= 0"};
  }
  const char* keys[] = {p.server_public_key, p.client_public_key, p.client_secret_key};
  int given = 0;
  for (const char* key : keys) {
    if (!key) continue;
    ++given;
    if (std::string_view(key).size() != 40) {
      return {KVF_ERR_INVALID_ARGUMENT, "CURVE keys are Z85 text of 40 characters (zmq_curve_keypair)"};
    }
  }
  if (given != 0 && given != 3) {
    return {KVF_ERR_INVALID_ARGUMENT, "CURVE needs all three keys (server public, client public, client secret) or none"};
  }
  return {};
}

}  // namespace

Client::Client(const kvf_client_params& params)
    : endpoint_(params.endpoint),
      request_timeout_ms_(params.request_timeout_ms),
      own_context_(params.zmq_context ? std::nullopt : std::make_optional<zmq::context_t>()),
      context_(params.zmq_context ? params.zmq_context : own_context_->handle()),
      shared_(context_) {
  link_ = std::make_unique<Link>(context_, shared_, settings_from(params));
  thread_ = std::thread([this] { link_->run(); });
}

Status Client::connect(const kvf_client_params& params, std::unique_ptr<Client>* out) {
  if (Status status = check_params(params); !status.ok()) return status;
  std::unique_ptr<Client> client;
  try {
    client.reset(new Client(params));
  } catch (const zmq::error_t& e) {
    return {KVF_ERR_CONNECT, std::string("cannot connect to ") + params.endpoint + ": " + e.what()};
  }
  if (params.connect_timeout_ms > 0) {
    if (Status status = client->wait_for_hello(params.connect_timeout_ms); !status.ok()) return status;
  }
  *out = std::move(client);
  return {};
}

Client::~Client() {
  {
    std::lock_guard<std::mutex> lock(shared_.commands_mutex);
    shared_.close_requested = true;
    if (!shared_.stopped) shared_.wake_sender.send(zmq::message_t(), zmq::send_flags::dontwait);
  }
  if (thread_.joinable()) thread_.join();
  shared_.events.shut();
}

Status Client::wait_for_hello(int32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(shared_.info_mutex);
  const bool answered = shared_.info_changed.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
    return shared_.have_info || !shared_.link_problem.empty();
  });
  if (shared_.have_info) return {};
  if (answered) return {KVF_ERR_CONNECT, shared_.link_problem};
  return {KVF_ERR_TIMEOUT, "no answer from " + endpoint_ + " within " + std::to_string(timeout_ms) +
                               " ms (connect_timeout_ms): is kvframe-serve running there?"};
}

Status Client::server_info(kvf_server_info* out) {
  std::lock_guard<std::mutex> lock(shared_.info_mutex);
  *out = shared_.info;
  return {};
}

Status Client::check_session(kvf_session session) {
  std::lock_guard<std::mutex> lock(shared_.sessions_mutex);
  if (shared_.open_sessions.count(session)) return {};
  return {KVF_ERR_UNKNOWN_SESSION, "session " + std::to_string(session) + " is not open on this client"};
}

Status Client::check_size(const RequestSpec& spec, const char* what) {
  const std::size_t bound = encoded_size_bound(spec);
  const uint64_t limit = shared_.max_message_bytes.load();
  if (bound <= limit) return {};
  return {KVF_ERR_TOO_LARGE, std::string("the ") + what + " needs up to " + std::to_string(bound) +
                                 " bytes on the wire; the server takes at most " + std::to_string(limit) +
                                 " per message (nothing was sent: send patches, drop fields with block rules, or "
                                 "raise the server's --max-message-mb)"};
}

Status Client::submit(kvf_session session, RequestSpec spec, Delivery delivery, uint64_t* request_id) {
  Request request;
  request.id = shared_.next_request_id.fetch_add(1);
  request.session = session;
  request.spec = std::move(spec);
  request.delivery = std::move(delivery);
  if (request_timeout_ms_ > 0) request.deadline = Clock::now() + std::chrono::milliseconds(request_timeout_ms_);
  const uint64_t id = request.id;
  std::lock_guard<std::mutex> lock(shared_.commands_mutex);
  if (shared_.close_requested || shared_.stopped) return {KVF_ERR_CLOSED, "the client is closed"};
  shared_.commands.push_back(std::move(request));
  if (!shared_.wake_pending) {
    shared_.wake_sender.send(zmq::message_t(), zmq::send_flags::dontwait);
    shared_.wake_pending = true;
  }
  if (request_id) *request_id = id;
  return {};
}

BlockingReply Client::submit_and_wait(kvf_session session, RequestSpec spec) {
  if (on_background_thread()) {
    return BlockingReply{Status{KVF_ERR_INVALID_ARGUMENT,
                                "a blocking call (session open/close, stats) from a callback would wait for itself"},
                         0, {}};
  }
  Delivery delivery;
  delivery.waiter = std::make_shared<std::promise<BlockingReply>>();
  std::future<BlockingReply> reply = delivery.waiter->get_future();
  if (Status status = submit(session, std::move(spec), std::move(delivery), nullptr); !status.ok()) {
    return BlockingReply{status, 0, {}};
  }
  return reply.get();  // the background thread enforces request_timeout_ms
}

Status Client::open_session(const kvf_session_params& params, kvf_session* out) {
  if (params.mode < KVF_MODE_FULL || params.mode > KVF_MODE_BLOCK) {
    return {KVF_ERR_INVALID_ARGUMENT, "params.mode is not a kvf_mode"};
  }
  RequestSpec spec = open_spec_from(params);
  if (Status status = check_size(spec, "session's parameters"); !status.ok()) return status;
  const kvf_session handle = next_session_.fetch_add(1);
  BlockingReply reply = submit_and_wait(handle, std::move(spec));
  if (reply.status.ok()) *out = handle;
  return reply.status;
}

Status Client::close_session(kvf_session session) {
  {
    std::lock_guard<std::mutex> lock(shared_.sessions_mutex);
    if (shared_.open_sessions.erase(session) == 0) {
      return {KVF_ERR_UNKNOWN_SESSION, "session " + std::to_string(session) + " is not open on this client"};
    }
  }
  return submit_and_wait(session, CloseSpec{}).status;
}

Status Client::send_frame(kvf_session session, uint64_t frame_number, kvf_frame_format format, std::string_view json,
                          kvf_callback callback, void* user, uint64_t* request_id) {
  if (format < KVF_FRAME_WHOLE || format > KVF_FRAME_JSON_PATCH) {
    return {KVF_ERR_INVALID_ARGUMENT, "format is not a kvf_frame_format"};
  }
  FrameSpec frame;
  frame.frame_number = frame_number;
  frame.format = static_cast<fb::FrameFormat>(format);
  frame.json = std::make_shared<const std::string>(json);
  RequestSpec spec = std::move(frame);
  if (Status status = check_size(spec, "frame"); !status.ok()) return status;
  {
    std::lock_guard<std::mutex> lock(shared_.sessions_mutex);
    auto open = shared_.open_sessions.find(session);
    if (open == shared_.open_sessions.end()) {
      return {KVF_ERR_UNKNOWN_SESSION, "session " + std::to_string(session) + " is not open on this client"};
    }
    if (format != KVF_FRAME_WHOLE) std::get<FrameSpec>(spec).base_frame = open->second;
    open->second = frame_number;
  }
  return submit(session, std::move(spec), Delivery{callback, user, nullptr, false}, request_id);
}

Status Client::query(kvf_session session, const kvf_query_params& params, kvf_callback callback, void* user,
                     uint64_t* request_id) {
  if (!params.instruction) return {KVF_ERR_INVALID_ARGUMENT, "params.instruction is NULL"};
  if (params.kind < KVF_TASK_TEXT || params.kind > KVF_TASK_COMMENTARY) {
    return {KVF_ERR_INVALID_ARGUMENT, "params.kind is not a kvf_task_kind"};
  }
  if (params.stop_count > 0 && !params.stop) return {KVF_ERR_INVALID_ARGUMENT, "params.stop is NULL but stop_count > 0"};
  if (Status status = check_session(session); !status.ok()) return status;
  RequestSpec spec = query_spec_from(params);
  if (Status status = check_size(spec, "query"); !status.ok()) return status;
  return submit(session, std::move(spec), Delivery{callback, user, nullptr, false}, request_id);
}

std::unique_ptr<kvf_event> Client::poll(int32_t timeout_ms) { return shared_.events.pop(timeout_ms); }

Status Client::stats_json(std::string* out) {
  BlockingReply reply = submit_and_wait(0, StatsSpec{});
  if (reply.status.ok()) *out = std::move(reply.stats_json);
  return reply.status;
}

}  // namespace kvframe::client
