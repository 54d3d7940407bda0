// Helpers shared by the client tests: owning handles, connecting to and
// opening sessions on a ScriptedServer, and collecting callback events.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvframe/client/kvframe_client.hpp"
#include "scripted_server.h"

namespace kvframe::test {

using ClientPtr = std::unique_ptr<kvf_client, decltype(&kvf_client_close)>;
using EventPtr = std::unique_ptr<kvf_event, decltype(&kvf_event_free)>;

// `endpoint` must outlive the params (they point into it).
inline kvf_client_params client_params(const std::string& endpoint, int32_t request_timeout_ms = 5000) {
  kvf_client_params p = client::defaults(kvf_client_params_init);
  p.endpoint = endpoint.c_str();
  p.connect_timeout_ms = 5000;
  p.request_timeout_ms = request_timeout_ms;
  return p;
}

// Connects while the scripted server answers the Hello.
inline ClientPtr connect_scripted(ScriptedServer& server, kvf_client_params params, uint64_t instance_id = 1,
                                  uint64_t max_message_bytes = 1 << 20) {
  kvf_client* client = nullptr;
  auto connecting = std::async(std::launch::async, [&] { return kvf_client_connect(&params, &client); });
  server.answer_hello(instance_id, max_message_bytes);
  EXPECT_EQ(connecting.get(), KVF_OK) << kvf_client_last_error(nullptr);
  return ClientPtr(client, &kvf_client_close);
}

inline kvf_session_params game_params() {
  kvf_session_params p = client::defaults(kvf_session_params_init);
  p.game_id = "holdem";
  p.system_prompt = "You play poker.";
  return p;
}

// Opens a session while the scripted server answers with `server_session`.
inline kvf_session open_scripted(ScriptedServer& server, kvf_client* client, uint64_t server_session,
                                 kvf_session_params params = game_params()) {
  kvf_session session = 0;
  auto opening = std::async(std::launch::async, [&] { return kvf_session_open(client, &params, &session); });
  server.session_opened(server.expect(fb::Body::OpenSession), server_session);
  EXPECT_EQ(opening.get(), KVF_OK) << kvf_client_last_error(nullptr);
  return session;
}

inline EventPtr poll_event(kvf_client* client, int32_t timeout_ms = 5000) {
  kvf_event* event = nullptr;
  kvf_poll(client, timeout_ms, &event);
  return EventPtr(event, &kvf_event_free);
}

// A copy of an event, for checking after the callback returned.
struct SeenEvent {
  kvf_event_type type;
  uint64_t request_id;
  kvf_session session;
  uint64_t frame_number;
  kvf_status code;
  std::string text;
  uint32_t seq;
};

inline SeenEvent copy_of(const kvf_event* e) {
  return {kvf_event_type_of(e), kvf_event_request_id(e), kvf_event_session(e), kvf_event_frame_number(e),
          kvf_event_error_code(e), kvf_event_text(e, nullptr), kvf_event_chunk_seq(e)};
}

// Collects the events of callback requests (pass `&collector` as user data).
class Collector {
 public:
  static void callback(const kvf_event* event, void* user) {
    auto* self = static_cast<Collector*>(user);
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->events_.push_back(copy_of(event));
    self->changed_.notify_all();
  }
  // Waits (bounded, generously: a failure, not a timing check) for `count` events.
  std::vector<SeenEvent> wait_for(std::size_t count, int timeout_ms = 10000) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return events_.size() >= count; });
    return events_;
  }
  // Waits (bounded likewise) for a final event: a Result or an Error.
  std::vector<SeenEvent> wait_for_final(int timeout_ms = 10000) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
      return std::any_of(events_.begin(), events_.end(), [](const SeenEvent& e) { return e.type != KVF_EVENT_CHUNK; });
    });
    return events_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<SeenEvent> events_;
};

}  // namespace kvframe::test
