// The client's background thread: the only user of the DEALER socket. It
// sends requests, routes replies by request_id, times requests out, keeps
// its sessions from expiring while it has nothing to send (Ping), and
// brings sessions back after a server restart (see the header comment of
// kvframe_client.h, "Recovery").
#pragma once

#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "request.h"

namespace kvframe::client {

struct LinkSettings {
  std::string endpoint;
  std::string client_name;
  int32_t request_timeout_ms = 30000;  // 0: never
  std::string server_public_key, client_public_key, client_secret_key;  // all or none
};

class Link {
 public:
  // Creates and connects the sockets; throws zmq::error_t for a bad endpoint or key.
  Link(void* context, Shared& shared, LinkSettings settings);
  // Runs until the client is closed; then every request left has failed with
  // KVF_ERR_CLOSED. Throws nothing.
  void run();

 private:
  enum class Phase {
    Opening,    // the first OpenSession is in flight
    Open,
    Reopening,  // must be (or is being) re-opened on a restarted server; newer requests wait
    Lost        // re-opening failed: requests fail with UnknownSession
  };
  struct ReplayFrame {
    FrameSpec frame;
    uint64_t request_id;  // the request whose answer decides the frame: its own, or its re-sent copy's
  };
  struct Session {
    OpenSpec params;
    Phase phase = Phase::Opening;
    uint64_t server_id = 0;
    uint64_t reopen_request = 0;      // the re-open in flight, 0 if none
    std::deque<uint64_t> held;        // requests waiting for the re-open, in order
    std::vector<ReplayFrame> replay;  // the last whole frame sent, then the patches after it
    std::size_t replay_bytes = 0;
    bool replay_complete = true;      // false: over the bound, or patches with no whole frame
    std::vector<uint64_t> in_doubt;   // frames in flight when the connection dropped
    std::string lost_reason;
  };

  // the loop
  void loop();
  void take_commands();
  void on_monitor_event();
  void on_message(const zmq::message_t& bytes);
  void expire_requests(Clock::time_point now);
  // keepalive: a Ping when the client holds sessions and has sent nothing
  // for ping_interval_, so the server does not take it for gone
  bool pinging() const;
  std::chrono::milliseconds until_ping(Clock::time_point now) const;  // -1: no ping due
  void set_ping_interval(uint32_t session_idle_ms);  // the server's idle limit; 0: none
  void keep_alive(Clock::time_point now);
  // requests
  void dispatch(uint64_t id);
  void send(Request& request);
  void put(const flatbuffers::DetachedBuffer& bytes);  // onto the wire, noting when
  uint64_t send_internal(kvf_session session, RequestSpec spec);
  void close_orphan(uint64_t server_session);  // a session the server opened for a request given up on
  void deliver(const Request& request, const kvf_event& event);
  void finish(uint64_t id, const kvf_event& event);
  void fail(uint64_t id, kvf_status code, std::string message);
  void resolve(uint64_t id, BlockingReply reply);
  void on_session_reply(uint64_t id, const protocol::fb::Message& reply);
  void on_event_reply(uint64_t id, const protocol::fb::Message& reply);
  // recovery
  void on_connected();
  void on_disconnected();
  void on_hello(const protocol::fb::HelloReply& hello);
  void start_reopen(kvf_session handle, Session& session);
  void on_reopened(kvf_session handle, Session& session, uint64_t server_id);
  void lose(Session& session, kvf_status code, std::string reason);
  void remember_frame(Session& session, const FrameSpec& frame, uint64_t request_id);
  void forget_refused_frame(Session& session, uint64_t request_id);
  void forget_session(kvf_session handle);
  // closing
  void begin_close();
  bool close_done(Clock::time_point now) const;
  void fail_all(kvf_status code, const std::string& message);

  Clock::time_point deadline_after(int32_t ms) const;
  std::vector<uint64_t> sorted_request_ids() const;

  Shared& shared_;
  const LinkSettings settings_;
  Socket dealer_;
  Socket monitor_;
  Socket wake_receiver_;

  std::unordered_map<uint64_t, Request> requests_;
  std::map<kvf_session, Session> sessions_;
  std::deque<uint64_t> waiting_;  // requests that came while there was no link, in order
  bool connected_ = false;        // the handshake succeeded and no disconnect since
  bool link_up_ = false;          // ... and the server answered our Hello
  bool have_instance_ = false;
  uint64_t instance_id_ = 0;
  std::chrono::milliseconds ping_interval_{0};  // from HelloReply.session_idle_ms; 0: no pings
  Clock::time_point last_sent_{};

  std::vector<uint64_t> aligned_copy_;  // a received message moved to an aligned address

  bool closing_ = false;
  Clock::time_point close_deadline_{};
  Clock::time_point last_expiry_scan_{};
};

}  // namespace kvframe::client
