#include "event.h"

#include <iterator>
#include <type_traits>

#include "action.h"

namespace kvframe::client {

namespace fb = protocol::fb;

namespace {

// A reply's error code becomes the kvf_status of the same value: the two
// lists must agree value for value, and a code added to the wire must be
// added here. A code not here comes from a newer server (status_of).
struct SameCode {
  fb::ErrorCode wire;
  kvf_status status;
};
constexpr SameCode kSameCodes[] = {
    {fb::ErrorCode::None, KVF_OK},
    {fb::ErrorCode::Malformed, KVF_ERR_MALFORMED},
    {fb::ErrorCode::TooLarge, KVF_ERR_TOO_LARGE},
    {fb::ErrorCode::WrongVersion, KVF_ERR_WRONG_VERSION},
    {fb::ErrorCode::UnknownSession, KVF_ERR_UNKNOWN_SESSION},
    {fb::ErrorCode::BadRequest, KVF_ERR_BAD_REQUEST},
    {fb::ErrorCode::BadJson, KVF_ERR_BAD_JSON},
    {fb::ErrorCode::OutOfOrder, KVF_ERR_OUT_OF_ORDER},
    {fb::ErrorCode::Deadline, KVF_ERR_DEADLINE},
    {fb::ErrorCode::Busy, KVF_ERR_BUSY},
    {fb::ErrorCode::ContextFull, KVF_ERR_CONTEXT_FULL},
    {fb::ErrorCode::Engine, KVF_ERR_ENGINE},
    {fb::ErrorCode::Unsupported, KVF_ERR_UNSUPPORTED},
    {fb::ErrorCode::ShuttingDown, KVF_ERR_SHUTTING_DOWN},
    {fb::ErrorCode::Internal, KVF_ERR_INTERNAL},
    {fb::ErrorCode::Unsatisfiable, KVF_ERR_UNSATISFIABLE},
    {fb::ErrorCode::QuotaExceeded, KVF_ERR_QUOTA_EXCEEDED},
    {fb::ErrorCode::StaleBase, KVF_ERR_STALE_BASE},
    {fb::ErrorCode::UnknownAdapter, KVF_ERR_UNKNOWN_ADAPTER},
    {fb::ErrorCode::Timeout, KVF_ERR_TIMEOUT},
    {fb::ErrorCode::Disconnected, KVF_ERR_DISCONNECTED},
};
constexpr bool codes_agree() {
  for (const SameCode& same : kSameCodes) {
    if (static_cast<int>(same.wire) != static_cast<int>(same.status)) return false;
  }
  return true;
}
static_assert(codes_agree(), "kvf_status and the wire's ErrorCode differ");
static_assert(std::size(kSameCodes) ==
                  std::extent_v<std::remove_reference_t<decltype(fb::EnumValuesErrorCode())>>,
              "a wire ErrorCode has no kvf_status: add it to kvframe_client.h and kSameCodes");

std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

kvf_report report_from(const fb::Report* r, fb::StopReason stop, double round_trip_ms) {
  kvf_report out{};
  out.struct_size = sizeof out;
  out.round_trip_ms = round_trip_ms;
  out.stop_reason = static_cast<int32_t>(stop);
  if (!r) return out;
  out.partition_ms = r->partition_ms();
  out.tokenize_ms = r->tokenize_ms();
  out.encode_ms = r->encode_ms();
  out.reposition_ms = r->reposition_ms();
  out.query_prefill_ms = r->query_prefill_ms();
  out.first_token_ms = r->first_token_ms();
  out.decode_ms = r->decode_ms();
  out.engine_ms = r->engine_ms();
  out.queue_ms = r->queue_ms();
  out.server_ms = r->server_ms();
  out.blocks_total = r->blocks_total();
  out.blocks_reused = r->blocks_reused();
  out.blocks_encoded = r->blocks_encoded();
  out.cache_hits = r->cache_hits();
  out.blocks_repositioned = r->blocks_repositioned();
  out.tokens_encoded = r->tokens_encoded();
  out.context_tokens = r->context_tokens();
  out.query_tokens = r->query_tokens();
  out.generated_tokens = r->generated_tokens();
  out.mode = static_cast<int32_t>(r->mode());
  out.first_chunk_ms = r->first_chunk_ms();
  out.mask_ms = r->mask_ms();
  out.batch_size = static_cast<int32_t>(r->batch_size());
  out.tokens_encoded_superseded = r->tokens_encoded_superseded();
  return out;
}

}  // namespace

kvf_status status_of(fb::ErrorCode code) {
  for (const SameCode& same : kSameCodes) {
    if (same.wire == code) return same.status;
  }
  return KVF_ERR_UNKNOWN;
}

std::string error_message(const fb::Error& error) {
  std::string message = str(error.message());
  if (status_of(error.code()) != KVF_ERR_UNKNOWN) return message;
  return message + " (error code " + std::to_string(static_cast<int>(error.code())) +
         " from the server, unknown to libkvframe_client " + std::to_string(KVF_VERSION_MAJOR) + "." +
         std::to_string(KVF_VERSION_MINOR) + "." + std::to_string(KVF_VERSION_PATCH) + ": a newer server's)";
}

kvf_event error_event(uint64_t request_id, kvf_session session, uint64_t frame_number, kvf_status code,
                      std::string message) {
  kvf_event e;
  e.type = KVF_EVENT_ERROR;
  e.request_id = request_id;
  e.session = session;
  e.frame_number = frame_number;
  e.error_code = code;
  e.raw_error_code = code;
  e.text = std::move(message);
  return e;
}

kvf_event event_from_reply(const fb::Message& reply, kvf_session session, uint64_t frame_number,
                           double round_trip_ms) {
  kvf_event e;
  e.request_id = reply.request_id();
  e.session = session;
  e.frame_number = frame_number;
  switch (reply.body_type()) {
    case fb::Body::FrameAck: {
      const fb::FrameAck* ack = reply.body_as_FrameAck();
      e.type = KVF_EVENT_FRAME_ACK;
      e.frame_number = ack->frame_number();
      e.superseded = ack->superseded();
      e.frame_ack = {};
      e.frame_ack.struct_size = sizeof e.frame_ack;
      e.frame_ack.blocks_total = ack->blocks_total();
      e.frame_ack.blocks_changed = ack->blocks_changed();
      e.frame_ack.blocks_removed = ack->blocks_removed();
      e.frame_ack.superseded = ack->superseded() ? 1 : 0;
      break;
    }
    case fb::Body::Chunk: {
      const fb::Chunk* chunk = reply.body_as_Chunk();
      e.type = KVF_EVENT_CHUNK;
      e.chunk_seq = chunk->seq();
      e.sentence_end = chunk->sentence_end();
      e.text = str(chunk->text());
      break;
    }
    case fb::Body::Result: {
      const fb::Result* result = reply.body_as_Result();
      e.type = KVF_EVENT_RESULT;
      e.frame_number = result->frame_number();
      e.text = str(result->text());
      e.action_json = str(result->action_json());
      e.choices_json = str(result->choices_json());
      e.action = stored_action(result->action());
      e.has_report = true;
      e.report = report_from(result->report(), result->stop(), round_trip_ms);
      break;
    }
    case fb::Body::Error: {
      const fb::Error* error = reply.body_as_Error();
      kvf_event failed =
          error_event(reply.request_id(), session, frame_number, status_of(error->code()), error_message(*error));
      failed.raw_error_code = static_cast<int32_t>(error->code());
      return failed;
    }
    default:
      return error_event(reply.request_id(), session, frame_number, KVF_ERR_INTERNAL,
                         std::string("unexpected reply ") + fb::EnumNameBody(reply.body_type()) +
                             " to this request (a server bug: please report it)");
  }
  return e;
}

void EventQueue::push(kvf_event event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_one();
}

std::unique_ptr<kvf_event> EventQueue::pop(int32_t timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto have_one = [&] { return !events_.empty() || shut_; };
  if (timeout_ms < 0) {
    ready_.wait(lock, have_one);
  } else if (timeout_ms > 0) {
    ready_.wait_for(lock, std::chrono::milliseconds(timeout_ms), have_one);
  }
  if (events_.empty()) return nullptr;
  auto event = std::make_unique<kvf_event>(std::move(events_.front()));
  events_.pop_front();
  return event;
}

void EventQueue::shut() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shut_ = true;
  }
  ready_.notify_all();
}

}  // namespace kvframe::client
