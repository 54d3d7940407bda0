// What the engine thread does with each queued request.
#include <algorithm>
#include <exception>

#include <nlohmann/json.hpp>

#include "kvframe/server_core/handler.h"
#include "replies.h"

namespace kvframe::server {

namespace {

// The least engine time a request keeps before another principal's turn may
// come between its decoding steps: a light game's answer still waits little,
// and tenants with equal loads do not cut into every step of each other's.
constexpr double kTurnSliceMs = 50;

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// NpcAction without a schema: the text is the action only if it is one.
std::string action_json_of(const std::string& text) {
  const auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_object() ? text : std::string();
}

// With a schema the text is the JSON value, perhaps after one leading space
// (the schema allows it: SentencePiece vocabularies start words with one).
std::string without_leading_spaces(const std::string& text) {
  const size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : text.substr(start);
}

// Why a patch may not be applied, if it may not: it was made against a frame
// other than the one the session holds (one refused or superseded, or none
// named), so applying it would leave the server a state the game never had.
std::optional<std::string> stale_base(const FrameRequest& frame, const SessionView& session) {
  if (frame.format == fb::FrameFormat::Whole) return std::nullopt;
  const std::string held = session.applied_frame ? "frame " + std::to_string(*session.applied_frame) : "no frame";
  if (!frame.base_frame) {
    return "patch " + std::to_string(frame.frame_number) +
           " names no base_frame (the frame it was made against), so the server cannot tell it fits the " + held +
           " it holds: nothing changed; send the whole frame, then patches with their base";
  }
  if (session.applied_frame == frame.base_frame) return std::nullopt;
  return "patch " + std::to_string(frame.frame_number) + " was made against frame " +
         std::to_string(*frame.base_frame) + ", but the session holds " + held +
         " (that frame was refused or superseded): nothing changed; send the whole frame";
}

}  // namespace

void RequestHandler::fail(ReplySink& out, const Work& work, fb::ErrorCode code, const std::string& message) {
  refuse(out, work.item.route, work.item.principal, {code, message, work.item.request.request_id, work.session_id});
}

void RequestHandler::expire_idle_sessions() {
  const Clock::time_point at = now();
  if (params_.session_idle.count() <= 0 || at < next_idle_check_) return;
  next_idle_check_ = at + std::chrono::seconds(1);
  for (const Scheduler::Expired& gone : scheduler_.expire_idle(at, params_.session_idle)) {
    backend_.close_session(gone.session_id);
    stats_.count_expired(gone.principal);
    log_.info("session expired", {{"session", hex_id(gone.session_id)},
                                  {"principal", gone.principal},
                                  {"idle_s", std::to_string(params_.session_idle.count() / 1000)}});
  }
}

bool RequestHandler::run_next(ReplySink& out, std::chrono::milliseconds wait) {
  expire_idle_sessions();
  std::optional<Work> work = scheduler_.take(warming_.empty() ? wait : std::chrono::milliseconds(0));
  if (!work) return warm_a_step();
  running_ = {&out, work->item.principal, now(), 0, false};
  const Outcome outcome = run_work(*work, out);
  running_.out = nullptr;
  if (outcome == Outcome::kFrameApplied && params_.warm_frames) warm_when_idle(work->session_id);
  return true;
}

// Idle time goes to the frame just applied: its query, when it comes, finds
// the blocks encoded. A request that arrives meanwhile waits for at most one
// frame's changed blocks, work its own query would have done. Other
// sessions' requests waiting only put the frame off until the engine is idle
// (a game streaming to several sessions at once, one per NPC or per mode,
// has every one of them warmed); the session's own next request, a query
// or a newer frame, takes it over.
void RequestHandler::warm_when_idle(uint64_t session_id) {
  if (scheduler_.queue_depth_of_session(session_id) > 0) return;
  const bool listed = std::find(warming_.begin(), warming_.end(), session_id) != warming_.end();
  if (scheduler_.queue_depth() > 0) {
    if (!listed) warming_.push_back(session_id);
  } else if (warm(session_id, params_.step_tokens) > 0 && !listed) {
    warming_.push_back(session_id);
  }
}

Outcome RequestHandler::run_work(const Work& work, ReplySink& out) {
  const Clock::time_point started = now();
  const double lent_before = running_.lent_ms;
  Outcome outcome = Outcome::kDone;
  try {
    const RequestBody& body = work.item.request.body;
    if (std::holds_alternative<OpenSessionRequest>(body)) {
      outcome = open_session(work, out);
    } else if (std::holds_alternative<FrameRequest>(body)) {
      outcome = apply_frame(work, out);
    } else if (std::holds_alternative<QueryRequest>(body)) {
      outcome = run_query(work, out);
    } else {
      outcome = close_session(work, out);
    }
  } catch (const std::exception& e) {
    // The backend promises not to throw; if it does, the client still gets its one reply
    // (a query batch is answered after the backend returns, so none of it was yet).
    fail(out, work, fb::ErrorCode::Internal, std::string("unexpected failure: ") + e.what());
    for (const QueuedRequest& item : work.batch) {
      refuse(out, item.route, item.principal,
             {fb::ErrorCode::Internal, std::string("unexpected failure: ") + e.what(), item.request.request_id,
              work.session_id});
    }
    const RequestBody& body = work.item.request.body;
    const bool session_unknown =
        std::holds_alternative<OpenSessionRequest>(body) || std::holds_alternative<CloseSessionRequest>(body);
    outcome = session_unknown ? Outcome::kSessionGone : Outcome::kDone;
  }
  // The turns other principals took between its decoding steps are theirs.
  const double engine_ms = ms_between(started, now()) - (running_.lent_ms - lent_before);
  for (const QueuedRequest& left : scheduler_.finish(work, outcome, engine_ms)) {
    refuse(out, left.route, left.principal,
           {fb::ErrorCode::UnknownSession, "the session did not open", left.request.request_id, work.session_id});
  }
  return outcome;
}

void RequestHandler::turn_between_steps() {
  if (!running_.out || running_.in_turn) return;
  const double running_ms = ms_between(running_.started, now()) - running_.lent_ms;
  if (running_ms < kTurnSliceMs) return;
  std::optional<Work> turn = scheduler_.take_ahead_of(running_.principal, running_ms);
  if (!turn) return;
  running_.in_turn = true;
  const Clock::time_point started = now();
  run_work(*turn, *running_.out);
  running_.lent_ms += ms_between(started, now());
  running_.in_turn = false;
}

uint64_t RequestHandler::warm(uint64_t session_id, uint32_t max_tokens) {
  try {
    if (max_tokens == 0) {
      backend_.warm(session_id);
      return 0;
    }
    return backend_.warm_step(session_id, max_tokens);
  } catch (const std::exception& e) {
    log_.warn("warming a frame failed", {{"session", hex_id(session_id)}, {"reason", e.what()}});
    return 0;
  }
}

bool RequestHandler::warm_a_step() {
  if (warming_.empty()) return false;
  const uint64_t session_id = warming_.front();
  warming_.pop_front();
  if (warm(session_id, params_.step_tokens) > 0) warming_.push_back(session_id);
  return true;
}

bool RequestHandler::frame_encoded(const Work& work) {
  if (params_.step_tokens == 0) return true;
  uint64_t left = warm(work.session_id, params_.step_tokens);
  // With nobody else waiting there is no one to be fair to: encode on.
  while (left > 0 && scheduler_.queue_depth() == 0) left = warm(work.session_id, params_.step_tokens);
  return left == 0;
}

Outcome RequestHandler::open_session(const Work& work, ReplySink& out) {
  const auto& open = std::get<OpenSessionRequest>(work.item.request.body);
  if (auto opened = backend_.open_session(work.session_id, open.config); !opened.ok()) {
    fail(out, work, opened.error().code, opened.error().message);
    return Outcome::kSessionGone;
  }
  log_.info("session opened", {{"session", hex_id(work.session_id)},
                               {"principal", work.item.principal},
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
    stats_.count_frame(true, work.item.principal);
    out.send(work.item.route, replies::frame_ack(request_id, work.session_id, frame.frame_number, true, {}));
    return Outcome::kDone;
  }
  if (auto stale = stale_base(frame, work.session)) {
    fail(out, work, fb::ErrorCode::StaleBase, *stale);
    return Outcome::kDone;
  }
  auto applied = backend_.apply_frame(work.session_id, frame.format, frame.json);
  if (!applied) {
    fail(out, work, applied.error().code, applied.error().message);
    return Outcome::kDone;
  }
  stats_.count_frame(false, work.item.principal);
  out.send(work.item.route, replies::frame_ack(request_id, work.session_id, frame.frame_number, false, *applied));
  return Outcome::kFrameApplied;
}

// ok() if a query taken from the queue may run, else why it is not run.
RequestStatus RequestHandler::check_runnable(const Work& work, const QueuedRequest& item, double queue_ms) const {
  const auto& query = std::get<QueryRequest>(item.request.body);
  const SessionView& session = work.session;
  auto refusal = [&](fb::ErrorCode code, std::string message) {
    return RequestError{code, std::move(message), item.request.request_id, work.session_id};
  };
  if (query.spec.deadline_frame != 0 && session.latest_frame && *session.latest_frame >= query.spec.deadline_frame) {
    return refusal(fb::ErrorCode::Deadline, "frame " + std::to_string(*session.latest_frame) +
                                                " arrived before the query ran (deadline_frame " +
                                                std::to_string(query.spec.deadline_frame) + ")");
  }
  const double expected_ms = scheduler_.expected_query_ms(session.mode);
  if (query.spec.deadline_ms != 0 && queue_ms + expected_ms > query.spec.deadline_ms) {
    return refusal(fb::ErrorCode::Deadline, "waited " + std::to_string(static_cast<long>(queue_ms)) +
                                                " ms and answering takes about " +
                                                std::to_string(static_cast<long>(expected_ms)) +
                                                " ms: past deadline_ms " + std::to_string(query.spec.deadline_ms));
  }
  if (!session.applied_frame || (query.spec.frame_number != 0 && *session.applied_frame != query.spec.frame_number)) {
    return refusal(fb::ErrorCode::OutOfOrder,
                   "the frame this query is about was rejected; " +
                       (session.applied_frame ? "the session is on frame " + std::to_string(*session.applied_frame)
                                              : std::string("no frame of this session has been applied")));
  }
  return {};
}

// The taken query and those batched behind it: each is checked on its own,
// the runnable ones are answered by one backend call (decoded as one batch),
// and the replies go out in request order.
Outcome RequestHandler::run_query(const Work& work, ReplySink& out) {
  // A query that will be refused needs no encoding; the others encode their
  // frame a step per turn first (step_tokens), then are answered.
  const Clock::time_point encoding_started = now();
  if (check_runnable(work, work.item, ms_between(work.item.received, now())).ok() && !frame_encoded(work)) {
    return Outcome::kDeferred;
  }
  // The steps that finished its frame this turn: encoding, not queueing.
  const double encoded_now_ms = ms_between(encoding_started, now());
  // A turn taken inside another's query answers its own session only.
  if (work.batch.empty() && params_.max_sessions_together > 1 && !running_.in_turn) {
    std::vector<Work> companions = scheduler_.take_companions(params_.max_sessions_together - 1);
    if (!companions.empty()) {
      run_across(work, std::move(companions), encoded_now_ms, out);
      return Outcome::kDone;
    }
  }
  const Clock::time_point taken = now();
  std::vector<const QueuedRequest*> items = {&work.item};
  for (const QueuedRequest& item : work.batch) items.push_back(&item);

  std::vector<RequestStatus> checks(items.size());
  std::vector<size_t> runnable;  // indices into items
  std::vector<double> queue_ms(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    const QueuedRequest& item = *items[i];
    const double waited = ms_between(item.received, taken);
    queue_ms[i] = std::max(0.0, waited - item.encoding_ms - encoded_now_ms);
    checks[i] = check_runnable(work, item, waited);
    if (!checks[i].ok()) continue;
    stats_.add_stage(Stage::kQueue, queue_ms[i]);
    runnable.push_back(i);
  }

  std::vector<QuerySpec> specs;
  std::vector<ChunkSink> sinks;
  std::vector<uint32_t> seqs(items.size(), 0);
  for (size_t i : runnable) {
    const QueuedRequest& item = *items[i];
    const auto& query = std::get<QueryRequest>(item.request.body);
    specs.push_back(query.spec);
    sinks.emplace_back();
    if (query.spec.stream) {
      sinks.back() = [&out, &item, &seq = seqs[i], session_id = work.session_id](std::string_view text,
                                                                               bool sentence_end) {
        out.send(item.route, replies::chunk(item.request.request_id, session_id, seq++, text, sentence_end));
      };
    }
  }
  std::vector<BackendResult<QueryAnswer>> answers;
  if (runnable.size() == 1) {
    answers.push_back(backend_.run_query(work.session_id, specs[0], sinks[0]));
  } else if (runnable.size() > 1) {
    answers = backend_.run_queries(work.session_id, specs, sinks);
  }

  for (size_t i = 0, k = 0; i < items.size(); ++i) {
    const QueuedRequest& item = *items[i];
    if (!checks[i].ok()) {
      refuse(out, item.route, item.principal, checks[i].error());
      continue;
    }
    const size_t answer_index = k++;
    if (answer_index >= answers.size() || !answers[answer_index]) {
      const BackendError error = answer_index < answers.size()
                                     ? answers[answer_index].error()
                                     : BackendError{fb::ErrorCode::Internal, "the backend lost a query"};
      refuse(out, item.route, item.principal, {error.code, error.message, item.request.request_id, work.session_id});
      continue;
    }
    send_result(out, work, item, *answers[answer_index], queue_ms[i], static_cast<uint32_t>(runnable.size()));
  }
  return Outcome::kDone;
}

void RequestHandler::run_across(const Work& work, std::vector<Work> companions, double encoded_now_ms,
                                ReplySink& out) {
  const Clock::time_point taken = now();
  std::vector<const Work*> works = {&work};
  for (const Work& companion : companions) works.push_back(&companion);
  // The scheduler learns a companion is done as soon as its answer is out
  // (the first work is finished by run_next, as always).
  std::vector<bool> answered(works.size(), false);
  auto done = [&](size_t i) {
    answered[i] = true;
    if (i > 0) scheduler_.finish(*works[i], Outcome::kDone, ms_between(taken, now()));
  };
  std::vector<Backend::SessionQuery> queries;
  std::vector<double> queue_ms(works.size(), 0);
  std::vector<uint32_t> seqs(works.size(), 0);
  for (size_t i = 0; i < works.size(); ++i) {
    const Work& w = *works[i];
    const QueuedRequest& item = w.item;
    const double waited = ms_between(item.received, taken);
    queue_ms[i] = std::max(0.0, waited - item.encoding_ms - (i == 0 ? encoded_now_ms : 0));
    if (auto runnable = check_runnable(w, item, waited); !runnable.ok()) {
      refuse(out, item.route, item.principal, runnable.error());
      done(i);
      continue;
    }
    stats_.add_stage(Stage::kQueue, queue_ms[i]);
    const auto& query = std::get<QueryRequest>(item.request.body);
    Backend::SessionQuery q;
    q.session_id = w.session_id;
    q.spec = query.spec;
    if (query.spec.stream) {
      q.on_chunk = [&out, &item, &seq = seqs[i], session_id = w.session_id](std::string_view text, bool sentence_end) {
        out.send(item.route, replies::chunk(item.request.request_id, session_id, seq++, text, sentence_end));
      };
    }
    q.on_answer = [this, &out, &w, &item, &queue_ms, &done, i](BackendResult<QueryAnswer> answer) {
      if (answer) {
        send_result(out, w, item, *answer, queue_ms[i], 1);
      } else {
        refuse(out, item.route, item.principal,
               {answer.error().code, answer.error().message, item.request.request_id, w.session_id});
      }
      done(i);
    };
    queries.push_back(std::move(q));
  }
  log_.debug("sessions answered together", {{"sessions", std::to_string(queries.size())}});
  std::string lost = "the backend lost a query";
  try {
    if (!queries.empty()) backend_.run_across(queries);
  } catch (const std::exception& e) {
    lost = std::string("unexpected failure: ") + e.what();
  }
  // The backend promises an answer for each and no exception; if not, every
  // query still gets its one reply, and every session goes back to the scheduler.
  for (size_t i = 0; i < works.size(); ++i) {
    if (answered[i]) continue;
    const QueuedRequest& item = works[i]->item;
    refuse(out, item.route, item.principal,
           {fb::ErrorCode::Internal, lost, item.request.request_id, works[i]->session_id});
    done(i);
  }
}

void RequestHandler::send_result(ReplySink& out, const Work& work, const QueuedRequest& item, QueryAnswer& answer,
                                 double queue_ms, uint32_t batch_size) {
  const auto& query = std::get<QueryRequest>(item.request.body);
  std::string action;
  std::optional<std::vector<uint8_t>> parsed;
  if (query.spec.kind == fb::TaskKind::NpcAction) {
    action = query.spec.output_schema.empty() ? action_json_of(answer.text) : without_leading_spaces(answer.text);
    // action_json came from a JSON parser or the schema's decoder, so it parses.
    if (!action.empty()) {
      if (auto built = protocol::action_flexbuffer(action)) parsed = std::move(built).value();
    }
  }
  stats_.add_engine_stages(answer.ms);
  stats_.count_query(item.principal);
  const double server_ms = ms_between(item.received, now());
  stats_.add_stage(Stage::kServer, server_ms);
  log_.debug("query answered", {{"session", hex_id(work.session_id)},
                                {"npc", query.spec.npc_id},
                                {"batch", std::to_string(batch_size)},
                                {"tokens", std::to_string(answer.generated_tokens)},
                                {"engine_ms", std::to_string(answer.ms.engine)},
                                {"server_ms", std::to_string(server_ms)}});
  out.send(item.route, replies::result(item.request.request_id,
                                       {work.session_id, *work.session.applied_frame, work.session.mode, &answer,
                                        action, parsed ? &*parsed : nullptr, queue_ms, server_ms, batch_size}));
}

Outcome RequestHandler::close_session(const Work& work, ReplySink& out) {
  backend_.close_session(work.session_id);
  log_.info("session closed", {{"session", hex_id(work.session_id)}});
  out.send(work.item.route, replies::session_closed(work.item.request.request_id, work.session_id));
  return Outcome::kSessionGone;
}

}  // namespace kvframe::server
