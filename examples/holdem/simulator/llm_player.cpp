#include "holdem/simulator/llm_player.h"

#include "holdem/simulator/match.h"

#include <chrono>

namespace kvframe::examples::holdem {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

}  // namespace

const char* const kPlayerSystemPrompt =
    "You play No-Limit Texas Hold'em for chips. The game state is JSON: state.players has your hole cards, "
    "state.legal_actions what you may do now, history the last hands, opponent_stats how the others play, "
    "your_read your hand, its equity against the players still in, the pot odds of a call, the equity "
    "above those odds (call_edge_pct) and the stack-to-pot ratio. Answer with your action as JSON.";

const char* const kCommentatorSystemPrompt =
    "You are a lively poker TV commentator. The game state is JSON; history's last entry is the hand just "
    "played. Comment on it in one or two short sentences.";

namespace {

// Sends `json` as the session's next whole frame; its error, if any, lands in `error`.
void send_frame(client::Session& session, uint64_t number, const std::string& json,
                std::shared_ptr<std::string> error) {
  client::Status sent = session.send_frame(number, KVF_FRAME_WHOLE, json, [error](const client::Event& e) {
    if (e.type() == KVF_EVENT_ERROR) *error = std::string(e.text());
  });
  if (!sent) *error = sent.message();
}

}  // namespace

std::string player_instruction(const PlayerInfo& me, const LegalActions& legal, const SeatRead& read,
                               const std::vector<RaiseOption>& raises) {
  std::string text = "You are " + me.id + " (" + me.name + "). It is your turn. " + seat_read_sentence(read) + " ";
  text += legal.can_check ? "You may check" : "You may call " + std::to_string(legal.call_amount) + ", fold";
  for (std::size_t i = 0; i < raises.size(); ++i) {
    text += i == 0 ? ", or raise to " : i + 1 == raises.size() ? " or " : ", ";
    text += std::to_string(raises[i].to) + " (" + raises[i].label + ")";
  }
  return text + ". Choose your action.";
}

std::string commentary_question(const Hand& hand, std::uint64_t hand_number, const std::vector<PlayerInfo>& players) {
  // The facts in the question itself: a small model comments on them far
  // better than on what it has to dig out of the history block.
  return "What happened: " + hand_line(hand, hand_number, players) + ". Comment on this hand for the viewers.";
}

const char* mode_name(kvf_mode mode) {
  switch (mode) {
    case KVF_MODE_FULL: return "full";
    case KVF_MODE_PREFIX: return "prefix";
    default: return "block";
  }
}

client::Expected<std::unique_ptr<LlmPlayer>> LlmPlayer::open(client::Client& client, const PlayerInfo& me,
                                                             const LlmParams& params) {
  std::unique_ptr<LlmPlayer> player(new LlmPlayer(me, params));
  for (kvf_mode mode : params.modes) {
    client::SessionParams session("holdem");
    session.rules_json = params.rules_json;
    session.mode = mode;
    session.system_prompt = kPlayerSystemPrompt;
    session.context_tokens = params.context_tokens;
    client::Expected<client::Session> opened = client.open_session(session);
    if (!opened) return opened.status();
    player->sessions_.push_back({mode, std::move(opened.value()), 0});
  }
  return player;
}

ModelSample LlmPlayer::ask(ModeSession& mode, const std::string& frame, const client::QueryParams& query,
                           const LegalActions& legal, const std::vector<std::int64_t>& raise_amounts) {
  ModelSample sample;
  sample.mode = mode_name(mode.mode);
  auto frame_error = std::make_shared<std::string>();
  const Clock::time_point start = Clock::now();
  send_frame(mode.session, ++mode.frames, frame, frame_error);
  client::Answer answer = mode.session.ask(query).get();
  const Clock::time_point end = Clock::now();
  sample.ttft_ms = ms_since(start, answer.first_chunk_at.value_or(end));
  sample.total_ms = ms_since(start, end);
  if (!frame_error->empty() || !answer.status) {
    last_error_ = !frame_error->empty() ? *frame_error : answer.status.message();
    return sample;
  }
  sample.answer = answer.action_json.empty() ? answer.text : answer.action_json;
  sample.choice = action_choice(answer.choices_json, legal);
  if (answer.report) {
    const kvf_report& r = *answer.report;
    sample.tokens_encoded = r.tokens_encoded;
    sample.tokens_prompt = r.context_tokens + r.query_tokens;
    sample.tokens_encoded_superseded = r.tokens_encoded_superseded;
    sample.blocks_reused = r.blocks_reused;
    sample.blocks_total = r.blocks_total;
    sample.queue_ms = r.queue_ms;
    sample.encode_ms = r.encode_ms;
    sample.query_prefill_ms = r.query_prefill_ms;
    sample.first_token_ms = r.first_token_ms;
  }
  if (std::optional<Action> action = action_from_json(sample.answer, legal, raise_amounts)) {
    sample.valid = true;
    sample.action = *action;
  }
  return sample;
}

void LlmPlayer::watch(const DecisionView& view) {
  const std::string frame = gamecore_json(view.hand, view.seat, view.memory, view.hand_number);
  for (ModeSession& mode : sessions_) {
    auto error = std::make_shared<std::string>();
    send_frame(mode.session, ++mode.frames, frame, error);
  }
}

Decision LlmPlayer::decide(const DecisionView& view) {
  const LegalActions legal = view.hand.legal();
  const std::vector<RaiseOption> raises = raise_menu(view.hand);
  const std::string frame = gamecore_json(view.hand, view.seat, view.memory, view.hand_number);
  client::QueryParams query(
      player_instruction(me_, legal, *shown_read(view.hand, view.seat, view.hand_number), raises));
  query.kind = KVF_TASK_NPC_ACTION;
  query.npc_id = me_.id;
  const std::vector<std::int64_t> amounts = raise_amounts(raises);
  query.output_schema = action_schema_json(legal, amounts);
  query.max_tokens = params_.max_tokens;
  query.stream = true;  // the first chunk is the first token: time to first token as the game sees it

  Decision decision;
  decision.reference = reference_.decide(view).action;
  for (ModeSession& mode : sessions_) decision.samples.push_back(ask(mode, frame, query, legal, amounts));
  const ModelSample& played = decision.samples.front();
  decision.invalid = !played.valid;
  decision.action = played.valid ? played.action : (legal.can_check ? Action::check() : Action::fold());
  return decision;
}

client::Expected<std::unique_ptr<Commentator>> Commentator::open(client::Client& client, const LlmParams& params) {
  client::SessionParams session("holdem-commentary");
  session.rules_json = params.rules_json;
  session.mode = params.modes.front();
  session.system_prompt = kCommentatorSystemPrompt;
  session.context_tokens = params.context_tokens;
  client::Expected<client::Session> opened = client.open_session(session);
  if (!opened) return opened.status();
  return std::unique_ptr<Commentator>(new Commentator(std::move(opened.value())));
}

bool Commentator::notable(const Hand& hand) { return hand.pot() >= 100 * hand.config().big_blind; }

std::string Commentator::comment(const Hand& hand, std::uint64_t hand_number, const MatchMemory& memory, int viewer,
                                 const std::function<void(std::string_view)>& on_chunk) {
  auto frame_error = std::make_shared<std::string>();
  send_frame(session_, ++frames_, gamecore_json(hand, viewer, memory, hand_number), frame_error);
  client::QueryParams query(commentary_question(hand, hand_number, memory.players()));
  query.kind = KVF_TASK_COMMENTARY;
  query.max_tokens = 40;
  query.stream = true;
  query.stop = {". ", "! ", "? ", "\n"};  // one sentence: the table does not wait for more
  client::Answer answer = session_.ask(query, on_chunk).get();
  if (!frame_error->empty() || !answer.status) return {};
  return answer.text;
}

}  // namespace kvframe::examples::holdem
