// kvframe_client.hpp — a thin, header-only C++17 layer over the C client
// (kvframe_client.h): RAII handles, std::function callbacks, a future for a
// query's answer, and errors as values (nothing here throws, except
// std::bad_alloc from the standard library itself).
//
//   auto client = kvframe::client::Client::connect({"tcp://127.0.0.1:5555"});
//   if (!client) { log(client.status().message()); return; }
//   auto session = client->open_session({});           // SessionParams: game_id, rules, mode...
//   session->send_frame(1, KVF_FRAME_WHOLE, json);
//   std::future<Answer> answer = session->ask({"What does p3 do?"});
//
// Callbacks run on the client's background thread, as in the C API. A
// Session must not outlive its Client.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvframe/client/kvframe_client.h"
#include "kvframe/common/options.h"  // the options' lists (generated, installed beside this header)

namespace kvframe::client {

// KVF_OK, or a failure with its message.
class Status {
 public:
  Status() = default;
  Status(kvf_status code, std::string message) : code_(code), message_(std::move(message)) {}
  // The status of a C call just made on this thread (its last error when it failed).
  static Status of_call(kvf_status code) { return code == KVF_OK ? Status() : Status(code, kvf_client_last_error(nullptr)); }

  bool ok() const { return code_ == KVF_OK; }
  explicit operator bool() const { return ok(); }
  kvf_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  kvf_status code_ = KVF_OK;
  std::string message_;
};

// A value, or the Status saying why there is none.
template <class T>
class Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}        // NOLINT: implicit by design
  Expected(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T& operator*() { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

// A C params struct at the library's defaults, sized as this header declares
// it (kvf_query_params q = kvframe::client::defaults(kvf_query_params_init)).
// It cannot fail: sizeof is always a size the library takes.
template <class Params>
Params defaults(kvf_status (*init)(Params*, size_t)) {
  Params params{};
  init(&params, sizeof params);
  return params;
}

namespace detail {

// Calls `call(&raw)`, a C function writing `raw` and returning its status:
// the value it wrote as a T, or the Status saying why there is none.
template <class T, class Raw = T, class Call>
Expected<T> read(Call&& call) {
  Raw raw{};
  if (Status status = Status::of_call(call(&raw)); !status) return status;
  return T(raw);
}

}  // namespace detail

// One value of a Result's parsed action (kvf_value): a view valid as long as
// the event it came from. Missing keys (KVF_ERR_NOT_FOUND) and wrong types
// (KVF_ERR_TYPE_MISMATCH) come back as a Status.
//
//   Expected<int64_t> chips = event.action()->get("bet.amount")->as_int();
class Value {
 public:
  Value() = default;  // no value (KVF_VALUE_NONE)
  explicit Value(const kvf_value& value) : v_(value) {}

  kvf_value_type type() const { return kvf_value_type_of(&v_); }
  // The value at `path` below this one: "amount", "target.id", "cards[1]" (see kvf_value_get).
  Expected<Value> get(const std::string& path) const {
    return detail::read<Value, kvf_value>([&](kvf_value* out) { return kvf_value_get(&v_, path.c_str(), out); });
  }
  Expected<bool> as_bool() const {
    return detail::read<bool, int32_t>([&](int32_t* out) { return kvf_value_as_bool(&v_, out); });
  }
  Expected<int64_t> as_int() const {
    return detail::read<int64_t>([&](int64_t* out) { return kvf_value_as_int(&v_, out); });
  }
  Expected<double> as_double() const {
    return detail::read<double>([&](double* out) { return kvf_value_as_double(&v_, out); });
  }
  // Points into the event's bytes.
  Expected<std::string_view> as_string() const {
    return detail::read<std::string_view>([&](std::string_view* out) { return text(kvf_value_as_string, out); });
  }
  // Elements of an array, members of an object (in key order); 0 otherwise.
  std::size_t size() const { return kvf_value_size(&v_); }
  Expected<Value> at(std::size_t index) const {
    return detail::read<Value, kvf_value>([&](kvf_value* out) { return kvf_value_at(&v_, index, out); });
  }
  Expected<std::string_view> key_at(std::size_t index) const {
    return detail::read<std::string_view>([&](std::string_view* out) {
      return text([index](const kvf_value* v, const char** p, size_t* n) { return kvf_value_key_at(v, index, p, n); },
                  out);
    });
  }
  const kvf_value& handle() const { return v_; }

 private:
  template <class Read>
  kvf_status text(Read&& read, std::string_view* out) const {
    const char* data = nullptr;
    size_t length = 0;
    const kvf_status code = read(&v_, &data, &length);
    if (code == KVF_OK) *out = std::string_view(data, length);
    return code;
  }
  kvf_value v_{};
};

// A view of one event; in a callback it is valid during the call only.
class Event {
 public:
  explicit Event(const kvf_event* event) : e_(event) {}

  kvf_event_type type() const { return kvf_event_type_of(e_); }
  bool is_final() const { return type() != KVF_EVENT_CHUNK; }  // a request's last event
  uint64_t request_id() const { return kvf_event_request_id(e_); }
  kvf_session session() const { return kvf_event_session(e_); }
  uint64_t frame_number() const { return kvf_event_frame_number(e_); }
  std::string_view text() const { return view(kvf_event_text); }
  std::string_view action_json() const { return view(kvf_event_action_json); }
  std::string_view choices_json() const { return view(kvf_event_choices_json); }
  // The action parsed (a Result of an npc_action query; KVF_ERR_NOT_FOUND otherwise).
  Expected<Value> action() const {
    return detail::read<Value, kvf_value>([&](kvf_value* out) { return kvf_event_action(e_, out); });
  }
  kvf_status error_code() const { return kvf_event_error_code(e_); }
  uint32_t chunk_seq() const { return kvf_event_chunk_seq(e_); }
  bool sentence_end() const { return kvf_event_sentence_end(e_) != 0; }
  bool superseded() const { return kvf_event_superseded(e_) != 0; }
  // A FrameAck's counts (nothing for other events).
  std::optional<kvf_frame_ack> frame_ack() const {
    kvf_frame_ack out{};
    out.struct_size = sizeof out;
    if (kvf_event_frame_ack(e_, &out) != KVF_OK) return std::nullopt;
    return out;
  }
  std::optional<kvf_report> report() const {
    kvf_report out{};
    out.struct_size = sizeof out;
    if (kvf_event_report(e_, &out) != KVF_OK) return std::nullopt;
    return out;
  }
  const kvf_event* handle() const { return e_; }

 private:
  std::string_view view(const char* (*field)(const kvf_event*, size_t*)) const {
    size_t length = 0;
    const char* text = field(e_, &length);
    return std::string_view(text, length);
  }
  const kvf_event* e_;
};

// An event taken with Client::poll; owns it.
class PolledEvent : public Event {
 public:
  explicit PolledEvent(kvf_event* event) : Event(event), owned_(event, &kvf_event_free) {}

 private:
  std::unique_ptr<kvf_event, void (*)(kvf_event*)> owned_;
};

using Callback = std::function<void(const Event&)>;

// A query's outcome, collected for Session::ask.
struct Answer {
  Status status;                    // the Error event's code and message, if it failed
  std::string text;
  std::string action_json;
  std::string choices_json;  // kvf_event_choices_json
  std::optional<kvf_report> report;
  std::vector<std::string> chunks;  // streamed pieces, in order
  // When the first chunk arrived (time to first token as the game sees it).
  std::optional<std::chrono::steady_clock::time_point> first_chunk_at;
  // The Result event (a kvf_event_clone), kept when it carries an action:
  // the Values of action() read it in place.
  std::shared_ptr<const PolledEvent> action_event;

  Expected<Value> action() const {
    if (!action_event) return Status(KVF_ERR_NOT_FOUND, "the answer carries no action");
    return action_event->action();
  }
};

namespace detail {

inline std::string text_or_empty(const char* text) { return text ? text : ""; }

inline std::vector<const char*> pointers_to(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  for (const std::string& s : strings) out.push_back(s.c_str());
  return out;
}

}  // namespace detail

// One option as a field of SessionParams or QueryParams (X arguments of
// kvframe/common/options.h's lists, made from protocol/options.json): the
// strings owned, each at kvf_*_params_init's default.
#define KVF_PARAMS_FIELD(KIND, name, c_type, cpp_type, value, c_value) \
  KVF_PARAMS_FIELD_##KIND(name, c_type, cpp_type, c_value)
#define KVF_PARAMS_FIELD_STRING(name, c_type, cpp_type, c_value) std::string name = detail::text_or_empty(c_value);
#define KVF_PARAMS_FIELD_STRINGS(name, c_type, cpp_type, c_value) std::vector<std::string> name;
#define KVF_PARAMS_FIELD_ENUM(name, c_type, cpp_type, c_value) c_type name = c_value;
#define KVF_PARAMS_FIELD_NUMBER(name, c_type, cpp_type, c_value) cpp_type name = c_value;

// ... and into the C struct `raw` from `params`, in two passes: the string
// lists' pointer arrays (alive until the call), then every field.
#define KVF_PARAMS_POINTERS(KIND, name, c_type, cpp_type, value, c_value) KVF_PARAMS_POINTERS_##KIND(name)
#define KVF_PARAMS_POINTERS_STRINGS(name) \
  const std::vector<const char*> name##_pointers = detail::pointers_to(params.name);
#define KVF_PARAMS_POINTERS_STRING(name)
#define KVF_PARAMS_POINTERS_ENUM(name)
#define KVF_PARAMS_POINTERS_NUMBER(name)
#define KVF_PARAMS_TO_C(KIND, name, c_type, cpp_type, value, c_value) KVF_PARAMS_TO_C_##KIND(name, c_type)
#define KVF_PARAMS_TO_C_STRING(name, c_type) raw.name = params.name.c_str();
#define KVF_PARAMS_TO_C_STRINGS(name, c_type) \
  raw.name = name##_pointers.empty() ? nullptr : name##_pointers.data();  \
  raw.name##_count = name##_pointers.size();
#define KVF_PARAMS_TO_C_ENUM(name, c_type) raw.name = params.name;
#define KVF_PARAMS_TO_C_NUMBER(name, c_type) raw.name = static_cast<c_type>(params.name);

// kvf_session_params' options (game_id, rules_json, mode, system_prompt, context_tokens, block mode's
// fidelity knobs, adapter: kvframe_client.h says what each does).
struct SessionParams {
  SessionParams(std::string game = {}) : game_id(std::move(game)) {}  // NOLINT: {"holdem"} reads well
  KVF_SESSION_OPTIONS(KVF_PARAMS_FIELD)
};

// kvf_query_params' options (instruction, kind, npc_id, output_schema, max_tokens, sampling, stop,
// stream, frame_number, deadlines: kvframe_client.h says what each does).
struct QueryParams {
  QueryParams(std::string text = {}) : instruction(std::move(text)) {}  // NOLINT: ask({"What now?"})
  KVF_QUERY_OPTIONS(KVF_PARAMS_FIELD)
  KVF_QUERY_SAMPLING_OPTIONS(KVF_PARAMS_FIELD)
};

namespace detail {

// The C callback behind a Callback: owns it until the request's last event.
inline void call_and_release(const kvf_event* event, void* user) {
  auto* callback = static_cast<Callback*>(user);
  const bool last = kvf_event_type_of(event) != KVF_EVENT_CHUNK;
  try {
    (*callback)(Event(event));
  } catch (...) {  // nothing may be thrown into the C library's thread
  }
  if (last) delete callback;
}

// Calls `send(c_callback, user)`, handing over `callback` when there is one.
template <class Send>
kvf_status with_callback(Callback callback, Send&& send) {
  if (!callback) return send(nullptr, nullptr);
  auto* owned = new Callback(std::move(callback));
  const kvf_status code = send(&call_and_release, owned);
  if (code != KVF_OK) delete owned;  // no event will come
  return code;
}

}  // namespace detail

class Session {
 public:
  Session(kvf_client* client, kvf_session id) : client_(client), id_(id) {}
  Session(Session&& other) noexcept : client_(other.client_), id_(std::exchange(other.id_, 0)) {}
  Session& operator=(Session&& other) noexcept {
    if (this != &other) {
      close();
      client_ = other.client_;
      id_ = std::exchange(other.id_, 0);
    }
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { close(); }

  kvf_session id() const { return id_; }

  // Closes it on the server (blocks, see kvf_session_close). Idempotent.
  Status close() {
    if (id_ == 0) return {};
    return Status::of_call(kvf_session_close(client_, std::exchange(id_, 0)));
  }

  // `on_ack` gets the ack or the error; without it, see kvf_send_frame.
  Status send_frame(uint64_t frame_number, kvf_frame_format format, std::string_view json, Callback on_ack = {}) {
    return Status::of_call(detail::with_callback(std::move(on_ack), [&](kvf_callback cb, void* user) {
      return kvf_send_frame(client_, id_, frame_number, format, json.data(), json.size(), cb, user, nullptr);
    }));
  }

  // Sends a query; its events go to `on_event` (or the poll queue). Returns the request id.
  Expected<uint64_t> query(const QueryParams& params, Callback on_event = {}) {
    kvf_query_params raw = defaults(kvf_query_params_init);
    KVF_QUERY_OPTIONS(KVF_PARAMS_POINTERS)
    KVF_QUERY_OPTIONS(KVF_PARAMS_TO_C)
    KVF_QUERY_SAMPLING_OPTIONS(KVF_PARAMS_TO_C)
    uint64_t request_id = 0;
    Status status = Status::of_call(detail::with_callback(std::move(on_event), [&](kvf_callback cb, void* user) {
      return kvf_query(client_, id_, &raw, cb, user, &request_id);
    }));
    if (!status) return status;
    return request_id;
  }

  // The query's whole answer, chunks included, once it is there. `on_chunk`
  // sees each streamed piece as it arrives (on the client's thread).
  std::future<Answer> ask(const QueryParams& params, std::function<void(std::string_view)> on_chunk = {}) {
    auto promise = std::make_shared<std::promise<Answer>>();
    auto answer = std::make_shared<Answer>();
    std::future<Answer> future = promise->get_future();
    Expected<uint64_t> sent = query(params, [promise, answer, on_chunk](const Event& e) {
      switch (e.type()) {
        case KVF_EVENT_CHUNK:
          if (answer->chunks.empty()) answer->first_chunk_at = std::chrono::steady_clock::now();
          answer->chunks.emplace_back(e.text());
          if (on_chunk) on_chunk(e.text());
          return;
        case KVF_EVENT_RESULT: {
          answer->text = std::string(e.text());
          answer->action_json = std::string(e.action_json());
          answer->choices_json = std::string(e.choices_json());
          answer->report = e.report();
          kvf_event* copy = nullptr;
          if (e.action() && kvf_event_clone(e.handle(), &copy) == KVF_OK) {
            answer->action_event = std::make_shared<const PolledEvent>(copy);
          }
          break;
        }
        default:
          answer->status = Status(e.error_code(), std::string(e.text()));
      }
      promise->set_value(std::move(*answer));
    });
    if (!sent) {
      Answer failed;
      failed.status = sent.status();
      promise->set_value(std::move(failed));
    }
    return future;
  }

 private:
  kvf_client* client_;
  kvf_session id_;
};

class Client {
 public:
  struct Params {
    Params(std::string where = "tcp://127.0.0.1:5555") : endpoint(std::move(where)) {}  // NOLINT: connect({endpoint})
    std::string endpoint;
    std::string client_name = "kvframe-client";
    int32_t connect_timeout_ms = 5000;
    int32_t request_timeout_ms = 30000;
    std::string server_public_key, client_public_key, client_secret_key;  // all or none
    void* zmq_context = nullptr;  // see kvf_client_params.zmq_context (inproc:// to a server in this process)
  };

  static Expected<Client> connect(const Params& params) {
    kvf_client_params p = defaults(kvf_client_params_init);
    p.endpoint = params.endpoint.c_str();
    p.client_name = params.client_name.c_str();
    p.connect_timeout_ms = params.connect_timeout_ms;
    p.request_timeout_ms = params.request_timeout_ms;
    auto key = [](const std::string& k) { return k.empty() ? nullptr : k.c_str(); };
    p.server_public_key = key(params.server_public_key);
    p.client_public_key = key(params.client_public_key);
    p.client_secret_key = key(params.client_secret_key);
    p.zmq_context = params.zmq_context;
    kvf_client* handle = nullptr;
    if (Status status = Status::of_call(kvf_client_connect(&p, &handle)); !status) return status;
    return Client(handle);
  }

  Client(Client&& other) noexcept : c_(std::exchange(other.c_, nullptr)) {}
  Client& operator=(Client&& other) noexcept {
    if (this != &other) {
      kvf_client_close(c_);
      c_ = std::exchange(other.c_, nullptr);
    }
    return *this;
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() { kvf_client_close(c_); }

  kvf_client* handle() const { return c_; }

  Expected<Session> open_session(const SessionParams& params) {
    kvf_session_params raw = defaults(kvf_session_params_init);
    KVF_SESSION_OPTIONS(KVF_PARAMS_POINTERS)
    KVF_SESSION_OPTIONS(KVF_PARAMS_TO_C)
    kvf_session id = 0;
    if (Status status = Status::of_call(kvf_session_open(c_, &raw, &id)); !status) return status;
    return Session(c_, id);
  }

  // The next queued event (requests sent without a callback); nullopt when none came in timeout_ms.
  std::optional<PolledEvent> poll(int32_t timeout_ms = 0) {
    kvf_event* event = nullptr;
    if (kvf_poll(c_, timeout_ms, &event) != KVF_OK) return std::nullopt;
    return PolledEvent(event);
  }

  Expected<kvf_server_info> server_info() const {
    kvf_server_info info{};
    info.struct_size = sizeof info;
    if (Status status = Status::of_call(kvf_client_server_info(c_, &info)); !status) return status;
    return info;
  }

  Expected<std::string> stats_json() {
    char* json = nullptr;
    if (Status status = Status::of_call(kvf_server_stats_json(c_, &json)); !status) return status;
    std::string out(json);
    kvf_string_free(json);
    return out;
  }

 private:
  explicit Client(kvf_client* handle) : c_(handle) {}
  kvf_client* c_;
};

}  // namespace kvframe::client
