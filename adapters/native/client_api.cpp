// The C ABI: argument checks, the thread's last error, and the one place
// where every exception (std::bad_alloc, zmq::error_t, ...) is caught, so
// nothing is ever thrown across it.
#include <cstdlib>
#include <cstring>
#include <new>

#include "action.h"
#include "client.h"
#include "param_defaults.h"
#include "sized_struct.h"

struct kvf_client {
  std::unique_ptr<kvframe::client::Client> impl;
};

namespace {

using kvframe::client::init_sized;
using kvframe::client::newer_fields_unset;
using kvframe::client::read_sized;
using kvframe::client::size_is_valid;
using kvframe::client::Status;
using kvframe::client::write_sized;

thread_local std::string t_last_error;

kvf_status report(const Status& status) {
  if (!status.ok()) t_last_error = status.message;
  return status.code;
}

kvf_status invalid(const char* message) { return report({KVF_ERR_INVALID_ARGUMENT, message}); }

// KVF_ERR_INVALID_ARGUMENT (the last error says what to set) unless `sized`'s
// struct_size is one some header declared.
template <class T>
kvf_status check_size(const T& sized, const char* type) {
  std::string problem;
  return size_is_valid(sized, type, &problem) ? KVF_OK : report({KVF_ERR_INVALID_ARGUMENT, problem});
}

// check_size, and for a params struct: KVF_ERR_UNSUPPORTED (the last error
// says which byte) when a newer caller set a field this library lacks.
template <class T>
kvf_status check_params(const T& params, const char* type) {
  if (kvf_status code = check_size(params, type); code != KVF_OK) return code;
  std::string problem;
  return newer_fields_unset(params, type, &problem) ? KVF_OK : report({KVF_ERR_UNSUPPORTED, problem});
}

// kvf_*_params_init: `defaults` into the caller's struct of `size` bytes.
template <class T>
kvf_status init_params(T* params, std::size_t size, const T& defaults, const char* type) {
  if (!params) return invalid("params is NULL");
  if (!kvframe::client::size_is_valid<T>(size)) {
    return report({KVF_ERR_INVALID_ARGUMENT, std::string(type) + "_init: size " + std::to_string(size) +
                                                 " is no header's: pass sizeof(" + type + ")"});
  }
  init_sized(defaults, params, size);
  return KVF_OK;
}

// Runs `body` (returning kvf_status) with every exception turned into a status.
template <class Body>
kvf_status guarded(Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report({KVF_ERR_INTERNAL, "out of memory"});
  } catch (const std::exception& e) {
    return report({KVF_ERR_INTERNAL, std::string("unexpected failure: ") + e.what()});
  } catch (...) {
    return report({KVF_ERR_INTERNAL, "unexpected failure"});
  }
}

// A read of a kvf_value's string or key, handed out as a pointer into the
// event's bytes (NUL-terminated there) and a length.
template <class Read>
kvf_status text_out(Read&& read, const char** out, size_t* len) {
  return guarded([&] {
    std::string_view text;
    const kvf_status code = report(read(&text));
    if (code == KVF_OK) {
      *out = text.data();
      if (len) *len = text.size();
    }
    return code;
  });
}

}  // namespace

extern "C" {

int32_t kvf_version(int32_t* major, int32_t* minor, int32_t* patch) {
  if (major) *major = KVF_VERSION_MAJOR;
  if (minor) *minor = KVF_VERSION_MINOR;
  if (patch) *patch = KVF_VERSION_PATCH;
  return KVF_VERSION;
}

const char* kvf_status_name(kvf_status status) {
  switch (status) {
#define KVF_NAME(code) \
  case code:           \
    return #code;
    KVF_NAME(KVF_OK)
    KVF_NAME(KVF_ERR_MALFORMED)
    KVF_NAME(KVF_ERR_TOO_LARGE)
    KVF_NAME(KVF_ERR_WRONG_VERSION)
    KVF_NAME(KVF_ERR_UNKNOWN_SESSION)
    KVF_NAME(KVF_ERR_BAD_REQUEST)
    KVF_NAME(KVF_ERR_BAD_JSON)
    KVF_NAME(KVF_ERR_OUT_OF_ORDER)
    KVF_NAME(KVF_ERR_DEADLINE)
    KVF_NAME(KVF_ERR_BUSY)
    KVF_NAME(KVF_ERR_CONTEXT_FULL)
    KVF_NAME(KVF_ERR_ENGINE)
    KVF_NAME(KVF_ERR_UNSUPPORTED)
    KVF_NAME(KVF_ERR_SHUTTING_DOWN)
    KVF_NAME(KVF_ERR_INTERNAL)
    KVF_NAME(KVF_ERR_UNSATISFIABLE)
    KVF_NAME(KVF_ERR_QUOTA_EXCEEDED)
    KVF_NAME(KVF_ERR_STALE_BASE)
    KVF_NAME(KVF_ERR_UNKNOWN_ADAPTER)
    KVF_NAME(KVF_ERR_TIMEOUT)
    KVF_NAME(KVF_ERR_DISCONNECTED)
    KVF_NAME(KVF_ERR_INVALID_ARGUMENT)
    KVF_NAME(KVF_ERR_CLOSED)
    KVF_NAME(KVF_ERR_EMPTY)
    KVF_NAME(KVF_ERR_CONNECT)
    KVF_NAME(KVF_ERR_NOT_FOUND)
    KVF_NAME(KVF_ERR_TYPE_MISMATCH)
    KVF_NAME(KVF_ERR_UNKNOWN)
#undef KVF_NAME
  }
  return "KVF_ERR_UNKNOWN";  // not a kvf_status at all: unknown too
}

kvf_status kvf_client_params_init(kvf_client_params* params, size_t size) {
  return init_params(params, size, kvframe::client::client_defaults(), "kvf_client_params");
}

kvf_status kvf_client_connect(const kvf_client_params* params, kvf_client** out) {
  if (!out) return invalid("out is NULL");
  *out = nullptr;
  if (!params) return invalid("params is NULL");
  if (kvf_status code = check_params(*params, "kvf_client_params"); code != KVF_OK) return code;
  return guarded([&] {
    auto client = std::make_unique<kvf_client>();
    const kvf_client_params whole = read_sized(*params, kvframe::client::client_defaults());
    if (kvf_status code = report(kvframe::client::Client::connect(whole, &client->impl)); code != KVF_OK) {
      return code;
    }
    *out = client.release();
    return KVF_OK;
  });
}

void kvf_client_close(kvf_client* client) {
  if (!client) return;
  if (client->impl->on_background_thread()) {  // it would join itself: refuse, and say so
    report({KVF_ERR_INVALID_ARGUMENT, "kvf_client_close called from a callback: ignored"});
    return;
  }
  try {
    delete client;
  } catch (...) {  // nothing may escape into the game
  }
}

const char* kvf_client_last_error(const kvf_client*) { return t_last_error.c_str(); }

kvf_status kvf_client_server_info(kvf_client* client, kvf_server_info* out) {
  if (!client || !out) return invalid("client or out is NULL");
  if (kvf_status code = check_size(*out, "kvf_server_info"); code != KVF_OK) return code;
  return guarded([&] {
    kvf_server_info info{};
    const kvf_status code = report(client->impl->server_info(&info));
    if (code == KVF_OK) write_sized(info, out);
    return code;
  });
}

kvf_status kvf_session_params_init(kvf_session_params* params, size_t size) {
  return init_params(params, size, kvframe::client::session_defaults(), "kvf_session_params");
}

kvf_status kvf_session_open(kvf_client* client, const kvf_session_params* params, kvf_session* out) {
  if (!client || !params || !out) return invalid("client, params or out is NULL");
  if (kvf_status code = check_params(*params, "kvf_session_params"); code != KVF_OK) return code;
  return guarded([&] {
    return report(client->impl->open_session(read_sized(*params, kvframe::client::session_defaults()), out));
  });
}

kvf_status kvf_session_close(kvf_client* client, kvf_session session) {
  if (!client) return invalid("client is NULL");
  return guarded([&] { return report(client->impl->close_session(session)); });
}

kvf_status kvf_send_frame(kvf_client* client, kvf_session session, uint64_t frame_number, kvf_frame_format format,
                          const char* json, size_t json_len, kvf_callback callback, void* user,
                          uint64_t* request_id) {
  if (!client) return invalid("client is NULL");
  if (!json && json_len > 0) return invalid("json is NULL");
  return guarded([&] {
    return report(client->impl->send_frame(session, frame_number, format, std::string_view(json ? json : "", json_len),
                                           callback, user, request_id));
  });
}

kvf_status kvf_query_params_init(kvf_query_params* params, size_t size) {
  return init_params(params, size, kvframe::client::query_defaults(), "kvf_query_params");
}

kvf_status kvf_query(kvf_client* client, kvf_session session, const kvf_query_params* params, kvf_callback callback,
                     void* user, uint64_t* request_id) {
  if (!client || !params) return invalid("client or params is NULL");
  if (kvf_status code = check_params(*params, "kvf_query_params"); code != KVF_OK) return code;
  return guarded([&] {
    const kvf_query_params whole = read_sized(*params, kvframe::client::query_defaults());
    return report(client->impl->query(session, whole, callback, user, request_id));
  });
}

kvf_status kvf_poll(kvf_client* client, int32_t timeout_ms, kvf_event** out) {
  if (!client || !out) return invalid("client or out is NULL");
  *out = nullptr;
  return guarded([&] {
    std::unique_ptr<kvf_event> event = client->impl->poll(timeout_ms);
    if (!event) return KVF_ERR_EMPTY;  // not a failure: the last error stays
    *out = event.release();
    return KVF_OK;
  });
}

void kvf_event_free(kvf_event* event) { delete event; }

kvf_event_type kvf_event_type_of(const kvf_event* e) { return e ? e->type : KVF_EVENT_ERROR; }
uint64_t kvf_event_request_id(const kvf_event* e) { return e ? e->request_id : 0; }
kvf_session kvf_event_session(const kvf_event* e) { return e ? e->session : 0; }
uint64_t kvf_event_frame_number(const kvf_event* e) { return e ? e->frame_number : 0; }

const char* kvf_event_text(const kvf_event* e, size_t* len) {
  if (len) *len = e ? e->text.size() : 0;
  return e ? e->text.c_str() : "";
}

const char* kvf_event_action_json(const kvf_event* e, size_t* len) {
  if (len) *len = e ? e->action_json.size() : 0;
  return e ? e->action_json.c_str() : "";
}

const char* kvf_event_choices_json(const kvf_event* e, size_t* len) {
  if (len) *len = e ? e->choices_json.size() : 0;
  return e ? e->choices_json.c_str() : "";
}

kvf_status kvf_event_error_code(const kvf_event* e) { return e ? e->error_code : KVF_ERR_INVALID_ARGUMENT; }
int32_t kvf_event_raw_error_code(const kvf_event* e) { return e ? e->raw_error_code : 0; }
uint32_t kvf_event_chunk_seq(const kvf_event* e) { return e ? e->chunk_seq : 0; }
int32_t kvf_event_sentence_end(const kvf_event* e) { return e && e->sentence_end ? 1 : 0; }
int32_t kvf_event_superseded(const kvf_event* e) { return e && e->superseded ? 1 : 0; }

kvf_status kvf_event_frame_ack(const kvf_event* e, kvf_frame_ack* out) {
  if (!e || !out) return invalid("event or out is NULL");
  if (kvf_status code = check_size(*out, "kvf_frame_ack"); code != KVF_OK) return code;
  if (e->type != KVF_EVENT_FRAME_ACK) return KVF_ERR_NOT_FOUND;
  write_sized(e->frame_ack, out);
  return KVF_OK;
}

kvf_status kvf_event_report(const kvf_event* e, kvf_report* out) {
  if (!e || !out) return invalid("event or out is NULL");
  if (kvf_status code = check_size(*out, "kvf_report"); code != KVF_OK) return code;
  if (!e->has_report) return invalid("only a Result event carries a report");
  write_sized(e->report, out);
  return KVF_OK;
}

kvf_status kvf_event_clone(const kvf_event* e, kvf_event** out) {
  if (!e || !out) return invalid("event or out is NULL");
  *out = nullptr;
  return guarded([&] {
    *out = new kvf_event(*e);
    return KVF_OK;
  });
}

kvf_status kvf_event_action(const kvf_event* e, kvf_value* out) {
  if (!e || !out) return invalid("event or out is NULL");
  return guarded([&] { return report(kvframe::client::action_root(e->action, out)); });
}

kvf_value_type kvf_value_type_of(const kvf_value* value) {
  return value ? kvframe::client::value_type(*value) : KVF_VALUE_NONE;
}

kvf_status kvf_value_get(const kvf_value* value, const char* path, kvf_value* out) {
  if (!value || !path || !out) return invalid("value, path or out is NULL");
  return guarded([&] { return report(kvframe::client::value_get(*value, path, out)); });
}

kvf_status kvf_value_as_bool(const kvf_value* value, int32_t* out) {
  if (!value || !out) return invalid("value or out is NULL");
  return guarded([&] {
    bool b = false;
    const kvf_status code = report(kvframe::client::value_as_bool(*value, &b));
    if (code == KVF_OK) *out = b ? 1 : 0;
    return code;
  });
}

kvf_status kvf_value_as_int(const kvf_value* value, int64_t* out) {
  if (!value || !out) return invalid("value or out is NULL");
  return guarded([&] { return report(kvframe::client::value_as_int(*value, out)); });
}

kvf_status kvf_value_as_double(const kvf_value* value, double* out) {
  if (!value || !out) return invalid("value or out is NULL");
  return guarded([&] { return report(kvframe::client::value_as_double(*value, out)); });
}

kvf_status kvf_value_as_string(const kvf_value* value, const char** out, size_t* len) {
  if (!value || !out) return invalid("value or out is NULL");
  return text_out([&](std::string_view* text) { return kvframe::client::value_as_string(*value, text); }, out, len);
}

size_t kvf_value_size(const kvf_value* value) { return value ? kvframe::client::value_size(*value) : 0; }

kvf_status kvf_value_at(const kvf_value* value, size_t index, kvf_value* out) {
  if (!value || !out) return invalid("value or out is NULL");
  return guarded([&] { return report(kvframe::client::value_at(*value, index, out)); });
}

kvf_status kvf_value_key_at(const kvf_value* value, size_t index, const char** key, size_t* len) {
  if (!value || !key) return invalid("value or key is NULL");
  return text_out([&](std::string_view* text) { return kvframe::client::value_key_at(*value, index, text); }, key, len);
}

kvf_status kvf_server_stats_json(kvf_client* client, char** out_json) {
  if (!client || !out_json) return invalid("client or out_json is NULL");
  *out_json = nullptr;
  return guarded([&] {
    std::string json;
    if (kvf_status code = report(client->impl->stats_json(&json)); code != KVF_OK) return code;
    char* copy = static_cast<char*>(std::malloc(json.size() + 1));
    if (!copy) return report({KVF_ERR_INTERNAL, "out of memory"});
    std::memcpy(copy, json.c_str(), json.size() + 1);
    *out_json = copy;
    return KVF_OK;
  });
}

void kvf_string_free(char* text) { std::free(text); }

}  // extern "C"
