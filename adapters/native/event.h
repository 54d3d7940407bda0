// kvf_event (the opaque type of the C API) and the queue kvf_poll() takes
// events from.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvframe/client/kvframe_client.h"
#include "kvframe/protocol/protocol.h"

struct kvf_event {
  kvf_event_type type = KVF_EVENT_ERROR;
  uint64_t request_id = 0;
  kvf_session session = 0;  // the client's stable handle, not the server's id
  uint64_t frame_number = 0;
  std::string text;         // chunk text, result text or error message
  std::string action_json;
  std::string choices_json;  // Result.choices_json
  std::vector<uint8_t> action;  // Result.action as stored_action() keeps it (action.h); empty: none
  kvf_status error_code = KVF_OK;
  int32_t raw_error_code = 0;  // as the server sent it: error_code, unless that is KVF_ERR_UNKNOWN
  uint32_t chunk_seq = 0;
  bool sentence_end = false;
  bool superseded = false;
  kvf_frame_ack frame_ack{};  // a FrameAck's counts
  bool has_report = false;
  kvf_report report{};
};

namespace kvframe::client {

// What a request's reply says, as an event; `frame_number` is the request's
// (used for errors, which carry none). round_trip_ms goes into a Result's report.
kvf_event event_from_reply(const protocol::fb::Message& reply, kvf_session session, uint64_t frame_number,
                           double round_trip_ms);
kvf_event error_event(uint64_t request_id, kvf_session session, uint64_t frame_number, kvf_status code,
                      std::string message);

// A wire ErrorCode as a kvf_status: KVF_ERR_UNKNOWN for one this client does
// not know (a newer server's), never a value outside the enum.
kvf_status status_of(protocol::fb::ErrorCode code);
// An Error's message, with the number the server sent when status_of does
// not know it (the one place a blocking call's caller can read it).
std::string error_message(const protocol::fb::Error& error);

// Events for kvf_poll, in arrival order; thread-safe.
class EventQueue {
 public:
  void push(kvf_event event);
  // The next event, waiting up to timeout_ms (<0: forever); nullptr if none.
  std::unique_ptr<kvf_event> pop(int32_t timeout_ms);
  // Wakes every waiting pop() for good (the client is closing).
  void shut();

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<kvf_event> events_;
  bool shut_ = false;
};

}  // namespace kvframe::client
