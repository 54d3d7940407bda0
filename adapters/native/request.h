// One request as the client tracks it, and the state the API threads and the
// background thread share.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <zmq.hpp>

#include "event.h"
#include "socket.h"
#include "wire.h"

namespace kvframe::client {

using Clock = std::chrono::steady_clock;

struct Status {
  kvf_status code = KVF_OK;
  std::string message;
  bool ok() const { return code == KVF_OK; }
};

// What a blocking call (connect, session open/close, stats) waits for.
struct BlockingReply {
  Status status;
  uint64_t server_session = 0;  // SessionOpened
  std::string stats_json;       // Stats
};

// Where a request's replies go: exactly one of these.
struct Delivery {
  kvf_callback callback = nullptr;  // on the background thread
  void* user = nullptr;
  std::shared_ptr<std::promise<BlockingReply>> waiter;  // a blocking call
  bool internal = false;  // the client's own (Hello, re-opens, re-sent frames): replies are consumed
  // neither: the poll queue
};

struct Request {
  uint64_t id = 0;
  kvf_session session = 0;  // 0: not about a session
  RequestSpec spec;
  Delivery delivery;
  Clock::time_point deadline = Clock::time_point::max();
  Clock::time_point first_sent_at{};  // for the report's round trip
  bool sent = false;                  // on the wire to the current connection
  uint64_t sent_to_session = 0;       // the server session id it was sent for
};

// State the API threads and the background thread share, each part under its own lock.
struct Shared {
  explicit Shared(void* context) : wake_sender(context, zmq::socket_type::pair) {}

  std::atomic<uint64_t> next_request_id{1};

  // API threads -> background thread: new requests, then a wakeup.
  std::mutex commands_mutex;
  std::vector<Request> commands;
  bool wake_pending = false;
  bool close_requested = false;
  bool stopped = false;       // the background thread has ended: nothing more is taken
  Socket wake_sender;  // used only under commands_mutex

  EventQueue events;

  // Background thread -> API threads: what the server said in its HelloReply.
  std::mutex info_mutex;
  std::condition_variable info_changed;
  kvf_server_info info{};
  bool have_info = false;
  std::string link_problem;  // why no HelloReply came (a refused handshake, a Hello error)
  std::atomic<uint64_t> max_message_bytes{protocol::kDefaultMaxMessageBytes};

  // Sessions the API may use: added when opened, removed when kvf_session_close
  // starts; with the number of the last frame sent on each, the base of the
  // next patch (the game makes a patch against the frame it sent before).
  std::mutex sessions_mutex;
  std::unordered_map<kvf_session, std::optional<uint64_t>> open_sessions;
};

}  // namespace kvframe::client
