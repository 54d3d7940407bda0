// Link, continued: noticing a restarted server and bringing the sessions back
// (kvframe_client.h, "Recovery"; adapters/native/README.md walks it through).
#include <algorithm>
#include <cstring>

#include "link.h"

namespace kvframe::client {

namespace {

namespace fb = protocol::fb;

// What a session keeps for re-sending after a restart. Beyond it the session
// keeps nothing until its next whole frame (the game then sees OutOfOrder for
// its patches after a restart, and sends a whole frame).
constexpr std::size_t kMaxReplayBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxReplayFrames = 4096;

}  // namespace

void Link::on_connected() {
  connected_ = true;
  send_internal(0, HelloSpec{settings_.client_name});
}

void Link::on_disconnected() {
  if (!connected_) return;
  connected_ = false;
  link_up_ = false;
  // Replies to what was in flight would go to the old connection: they are lost.
  for (uint64_t id : sorted_request_ids()) {
    Request& request = requests_.at(id);
    if (!request.sent) continue;
    request.sent = false;
    auto session = sessions_.find(request.session);
    if (std::holds_alternative<HelloSpec>(request.spec)) {
      requests_.erase(id);
      continue;
    }
    if (session != sessions_.end() && request.delivery.internal &&
        std::holds_alternative<OpenSpec>(request.spec)) {
      session->second.reopen_request = 0;  // re-opened again once connected
      requests_.erase(id);
      continue;
    }
    if (session != sessions_.end() && std::holds_alternative<FrameSpec>(request.spec)) {
      const auto& replay = session->second.replay;
      const bool replayable = std::any_of(replay.begin(), replay.end(),
                                          [&](const ReplayFrame& f) { return f.request_id == id; });
      if (replayable) {  // decided once the server answers Hello: re-sent if it restarted
        session->second.in_doubt.push_back(id);
        continue;
      }
    }
    if (request.delivery.internal) {
      requests_.erase(id);
      continue;
    }
    if (std::holds_alternative<OpenSpec>(request.spec) && session != sessions_.end()) sessions_.erase(session);
    fail(id, KVF_ERR_DISCONNECTED, "the connection to " + settings_.endpoint + " dropped while this request was in flight");
  }
}

void Link::on_hello(const fb::HelloReply& hello) {
  {
    std::lock_guard<std::mutex> lock(shared_.info_mutex);
    kvf_server_info& info = shared_.info;
    info = kvf_server_info{};
    if (hello.server_version()) {
      std::strncpy(info.server_version, hello.server_version()->c_str(), sizeof info.server_version - 1);
    }
    if (hello.model()) std::strncpy(info.model, hello.model()->c_str(), sizeof info.model - 1);
    info.max_message_bytes = hello.max_message_bytes();
    info.max_context = hello.max_context();
    info.instance_id = hello.instance_id();
    std::string adapters;
    if (hello.adapters()) {
      for (const flatbuffers::String* name : *hello.adapters()) adapters += (adapters.empty() ? "" : ",") + name->str();
    }
    std::strncpy(info.adapters, adapters.c_str(), sizeof info.adapters - 1);
    const std::string fallback = hello.default_adapter() ? hello.default_adapter()->str() : "none";
    std::strncpy(info.default_adapter, fallback.c_str(), sizeof info.default_adapter - 1);
    shared_.have_info = true;
    shared_.link_problem.clear();
    shared_.info_changed.notify_all();
  }
  if (hello.max_message_bytes() > 0) shared_.max_message_bytes = hello.max_message_bytes();
  set_ping_interval(hello.session_idle_ms());

  const bool restarted = have_instance_ && hello.instance_id() != instance_id_;
  have_instance_ = true;
  instance_id_ = hello.instance_id();
  link_up_ = true;
  for (auto& [handle, session] : sessions_) {
    if (session.phase == Phase::Open && restarted) session.phase = Phase::Reopening;
    if (session.phase == Phase::Reopening) {
      if (session.reopen_request == 0) start_reopen(handle, session);
      continue;
    }
    // The same server: whether a frame in flight arrived cannot be known.
    for (uint64_t id : session.in_doubt) {
      fail(id, KVF_ERR_DISCONNECTED, "the connection dropped while this frame was in flight");
    }
    session.in_doubt.clear();
  }
  std::deque<uint64_t> waiting;
  waiting.swap(waiting_);
  for (uint64_t id : waiting) dispatch(id);
}

void Link::start_reopen(kvf_session handle, Session& session) {
  session.phase = Phase::Reopening;
  if (!link_up_) return;  // re-opened once the server answers Hello
  session.reopen_request = send_internal(handle, session.params);
}

void Link::on_reopened(kvf_session handle, Session& session, uint64_t server_id) {
  session.phase = Phase::Open;
  session.server_id = server_id;
  // The new server session starts empty, so the frames keep their numbers.
  for (ReplayFrame& replayed : session.replay) {
    auto original = requests_.find(replayed.request_id);
    if (original != requests_.end() && !original->second.sent) {
      send(original->second);  // still awaiting its ack: the ack goes to its caller
    } else {
      replayed.request_id = send_internal(handle, replayed.frame);  // a refusal of it must find it
    }
  }
  for (uint64_t id : session.in_doubt) {  // the ones not re-sent above (the replay was cut short)
    auto left = requests_.find(id);
    if (left != requests_.end() && !left->second.sent) {
      fail(id, KVF_ERR_DISCONNECTED, "the server restarted while this frame was in flight");
    }
  }
  session.in_doubt.clear();
  std::deque<uint64_t> held;
  held.swap(session.held);
  for (uint64_t id : held) dispatch(id);
}

void Link::lose(Session& session, kvf_status code, std::string reason) {
  session.phase = Phase::Lost;
  session.lost_reason = reason + " (open a new session)";
  session.replay.clear();
  std::deque<uint64_t> held;
  held.swap(session.held);
  for (uint64_t id : session.in_doubt) held.push_back(id);
  session.in_doubt.clear();
  for (uint64_t id : held) fail(id, code, session.lost_reason);
}

void Link::remember_frame(Session& session, const FrameSpec& frame, uint64_t request_id) {
  if (frame.format == fb::FrameFormat::Whole) {
    session.replay.clear();
    session.replay_bytes = 0;
    session.replay_complete = true;
  } else if (session.replay.empty()) {
    session.replay_complete = false;  // a patch to a state this client never saw
  }
  if (!session.replay_complete) return;
  session.replay.push_back({frame, request_id});
  session.replay_bytes += frame.json->size();
  if (session.replay_bytes > kMaxReplayBytes || session.replay.size() > kMaxReplayFrames) {
    session.replay.clear();
    session.replay_bytes = 0;
    session.replay_complete = false;
  }
}

// The server refused a frame: it holds the state before it, and refuses the
// patches sent after it (their base is a frame it never applied). Re-sending
// any of them after a restart would give the new server a state the game was
// told it does not have.
void Link::forget_refused_frame(Session& session, uint64_t request_id) {
  auto refused = std::find_if(session.replay.begin(), session.replay.end(),
                              [&](const ReplayFrame& f) { return f.request_id == request_id; });
  if (refused == session.replay.end()) return;
  for (auto it = refused; it != session.replay.end(); ++it) session.replay_bytes -= it->frame.json->size();
  session.replay.erase(refused, session.replay.end());
  // Without its whole frame the server's state is not in the replay any more.
  if (session.replay.empty()) session.replay_complete = false;
}

// The session is closed: requests still waiting for it end with KVF_ERR_CLOSED.
void Link::forget_session(kvf_session handle) {
  sessions_.erase(handle);
  for (uint64_t id : sorted_request_ids()) {
    auto it = requests_.find(id);
    if (it != requests_.end() && it->second.session == handle && !it->second.delivery.waiter) {
      fail(id, KVF_ERR_CLOSED, "the session was closed before the reply came");
    }
  }
}

}  // namespace kvframe::client
