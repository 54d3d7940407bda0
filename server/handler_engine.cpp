// What the engine thread does with each queued request.
#include <exception>

#include <nlohmann/json.hpp>

#include "kvframe/server/handler.h"
#include "replies.h"

namespace kvframe::server {

namespace {

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// NpcAction without a schema: the text is the action only if it is one.
std::string action_json_of(const std::string& text) {
  const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? text : std::string();
}

}  // namespace

void RequestHandler::fail(ReplySink& out, const Work& work, fb::ErrorCode code, const std::string& message) {
  refuse(out, work.item.route, {code, message, work.item.request.request_id, work.session_id});
}

bool RequestHandler::run_next(ReplySink& out, std::chrono::milliseconds wait) {
  std::optional<Work> work = scheduler_.take(wait);
  if (!work) return false;
  const Clock::time_point started = now();
  Outcome outcome = Outcome::kDone;
  try {
    const RequestBody& body = work->item.request.body;
    if (std::holds_alternative<OpenSessionRequest>(body)) {
      outcome = open_session(*work, out);
    } else if (std::holds_alternative<FrameRequest>(body)) {
      outcome = apply_frame(*work, out);
    } else if (std::holds_alternative<QueryRequest>(body)) {
      outcome = run_query(*work, out);
    } else {
      outcome = close_session(*work, out);
    }
  } catch (const std::exception& e) {
    // The backend promises not to throw; if it does, the client still gets its one reply.
    fail(out, *work, fb::ErrorCode::Internal, std::string("unexpected failure: ") + e.what());
    const RequestBody& body = work->item.request.body;
    const bool session_unknown =
        std::holds_alternative<OpenSessionRequest>(body) || std::holds_alternative<CloseSessionRequest>(body);
    outcome = session_unknown ? Outcome::kSessionGone : Outcome::kDone;
  }
  for (const QueuedRequest& left : scheduler_.finish(*work, outcome, ms_between(started, now()))) {
    refuse(out, left.route,
           {fb::ErrorCode::UnknownSession, "the session did not open", left.request.request_id, work->session_id});
  }
  return true;
}

Outcome RequestHandler::open_session(const Work& work, ReplySink& out) {
  const auto& open = std::get<OpenSessionRequest>(work.item.request.body);
  if (auto failed = backend_.open_session(work.session_id, open.config)) {
    fail(out, work, failed->code, failed->message);
    return Outcome::kSessionGone;
  }
  log_.info("session opened", {{"session", hex_id(work.session_id)},
                               {"game", open.game_id},
                               {"mode", fb::EnumNameAttentionMode(open.config.mode)},
                               {"context", std::to_string(open.config.context_tokens)}});
  out.send(work.item.route, replies::session_opened(work.item.request.request_id, work.session_id,
                                                    open.config.context_tokens, open.config.mode));
  return Outcome::kDone;
}

Outcome RequestHandler::apply_frame(const Work& work, ReplySink& out) {
  const auto& frame = std::get<FrameRequest>(work.item.request.body);
  const uint64_t request_id = work.item.request.request_id;
  if (work.item.superseded) {
    stats_.count_frame(true);
    out.send(work.item.route, replies::frame_ack(request_id, work.session_id, frame.frame_number, true, {}));
    return Outcome::kDone;
  }
  auto applied = backend_.apply_frame(work.session_id, frame.format, frame.json);
  if (!applied) {
    fail(out, work, applied.error().code, applied.error().message);
    return Outcome::kDone;
  }
  stats_.count_frame(false);
  out.send(work.item.route, replies::frame_ack(request_id, work.session_id, frame.frame_number, false, *applied));
  return Outcome::kFrameApplied;
}

Outcome RequestHandler::run_query(const Work& work, ReplySink& out) {
  const auto& query = std::get<QueryRequest>(work.item.request.body);
  const uint64_t request_id = work.item.request.request_id;
  const SessionView& session = work.session;
  const Clock::time_point taken = now();
  const double queue_ms = ms_between(work.item.received, taken);
  if (query.deadline_frame != 0 && session.latest_frame && *session.latest_frame >= query.deadline_frame) {
    fail(out, work, fb::ErrorCode::Deadline,
         "frame " + std::to_string(*session.latest_frame) + " arrived before the query ran (deadline_frame " +
             std::to_string(query.deadline_frame) + ")");
    return Outcome::kDone;
  }
  const double expected_ms = scheduler_.expected_query_ms(session.mode);
  if (query.deadline_ms != 0 && queue_ms + expected_ms > query.deadline_ms) {
    fail(out, work, fb::ErrorCode::Deadline,
         "waited " + std::to_string(static_cast<long>(queue_ms)) + " ms and answering takes about " +
             std::to_string(static_cast<long>(expected_ms)) + " ms: past deadline_ms " +
             std::to_string(query.deadline_ms));
    return Outcome::kDone;
  }
  if (!session.applied_frame || (query.frame_number != 0 && *session.applied_frame != query.frame_number)) {
    fail(out, work, fb::ErrorCode::OutOfOrder,
         "the frame this query is about was rejected; " +
             (session.applied_frame ? "the session is on frame " + std::to_string(*session.applied_frame)
                                    : std::string("no frame of this session has been applied")));
    return Outcome::kDone;
  }
  stats_.add_stage(Stage::kQueue, queue_ms);
  uint32_t seq = 0;
  std::function<void(std::string_view)> on_text;
  if (query.stream) {
    on_text = [&](std::string_view text) {
      if (!text.empty()) out.send(work.item.route, replies::chunk(request_id, work.session_id, seq++, text));
    };
  }
  auto answer = backend_.run_query(work.session_id, query.spec, on_text);
  if (!answer) {
    fail(out, work, answer.error().code, answer.error().message);
    return Outcome::kDone;
  }
  const std::string action = query.kind == fb::TaskKind::NpcAction ? action_json_of(answer->text) : std::string();
  stats_.add_engine_stages(answer->ms);
  stats_.count_query();
  const double server_ms = ms_between(work.item.received, now());
  stats_.add_stage(Stage::kServer, server_ms);
  log_.debug("query answered", {{"session", hex_id(work.session_id)},
                                {"npc", query.npc_id},
                                {"tokens", std::to_string(answer->generated_tokens)},
                                {"engine_ms", std::to_string(answer->ms.engine)},
                                {"server_ms", std::to_string(server_ms)}});
  out.send(work.item.route, replies::result(request_id, {work.session_id, *session.applied_frame, session.mode,
                                                         &*answer, action, queue_ms, server_ms}));
  return Outcome::kDone;
}

Outcome RequestHandler::close_session(const Work& work, ReplySink& out) {
  backend_.close_session(work.session_id);
  log_.info("session closed", {{"session", hex_id(work.session_id)}});
  out.send(work.item.route, replies::session_closed(work.item.request.request_id, work.session_id));
  return Outcome::kSessionGone;
}

}  // namespace kvframe::server
