#include "holdem/simulator/match.h"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "common/deterministic_rng.h"

namespace kvframe::examples::holdem {
namespace {

using Json = nlohmann::ordered_json;

// Hand n's deck from (seed, n) alone: splitmix64 of both, so neighbouring
// seeds and hands get unrelated decks.
std::uint64_t deck_seed(std::uint64_t seed, std::uint64_t hand) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + hand;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// The table as the replay page draws it at one step.
Json snapshot(const Hand& hand, const std::string& kind, const std::string& text) {
  Json stacks = Json::array(), bets = Json::array(), folded = Json::array();
  for (const SeatState& seat : hand.seats()) {
    stacks.push_back(seat.stack);
    bets.push_back(seat.bet);
    folded.push_back(seat.folded || !seat.in_hand);
  }
  return {{"kind", kind},
          {"street", street_name(hand.street())},
          {"board", card_names(hand.board())},
          {"pot", hand.pot()},
          {"stacks", stacks},
          {"bets", bets},
          {"folded", folded},
          {"text", text}};
}

std::string board_text(const std::vector<Card>& board) {
  std::string text;
  for (Card card : board) text += (text.empty() ? "" : " ") + card_name(card);
  return text;
}

// Street steps for board cards dealt since `shown` of them were drawn (an
// all-in run-out deals flop, turn and river at once: one step each).
void add_street_steps(const Hand& hand, std::size_t& shown, Json& steps) {
  static const char* const kStreetOfBoard[] = {"preflop", "", "", "flop", "turn", "river"};
  for (std::size_t size : {std::size_t{3}, std::size_t{4}, std::size_t{5}}) {
    if (hand.board().size() < size || shown >= size) continue;
    const std::vector<Card> board(hand.board().begin(), hand.board().begin() + static_cast<long>(size));
    Json step = snapshot(hand, "street", std::string(kStreetOfBoard[size]) + ": " + board_text(board));
    step["street"] = kStreetOfBoard[size];
    step["board"] = card_names(board);
    steps.push_back(std::move(step));
    shown = size;
  }
}

std::string signed_chips(std::int64_t chips) { return (chips > 0 ? "+" : "") + std::to_string(chips); }

}  // namespace

std::string hand_line(const Hand& hand, std::uint64_t number, const std::vector<PlayerInfo>& players) {
  const HandResult& result = hand.result();
  std::string line = hand_id(number) + "  ";
  for (std::size_t i = 0; i < result.awards.size(); ++i) {
    const PotAward& award = result.awards[i];
    if (i) line += "; ";
    for (std::size_t w = 0; w < award.winners.size(); ++w) {
      line += (w ? "+" : "") + players[static_cast<std::size_t>(award.winners[w])].id;
    }
    line += (award.winners.size() > 1 ? " split " : " wins ") + std::to_string(award.amount);
    if (result.showdown) {
      const auto& shown = result.shown[static_cast<std::size_t>(award.winners.front())];
      if (shown) line += " (" + describe(*shown) + ")";
    }
  }
  line += "  |";
  for (std::size_t seat = 0; seat < result.net.size(); ++seat) {
    if (result.net[seat] != 0) line += " " + players[seat].id + " " + signed_chips(result.net[seat]);
  }
  return line;
}

std::string hand_summary(const Hand& hand, const std::vector<PlayerInfo>& players) {
  const HandResult& result = hand.result();
  if (result.awards.empty()) return "The pot goes nowhere.";
  const PotAward& award = result.awards.front();
  std::string who;
  for (std::size_t w = 0; w < award.winners.size(); ++w) {
    who += (w ? " and " : "") + players[static_cast<std::size_t>(award.winners[w])].name;
  }
  std::string text = who + (award.winners.size() > 1 ? " split " : " takes ") + std::to_string(award.amount) + " chips";
  if (result.showdown) {
    if (const auto& shown = result.shown[static_cast<std::size_t>(award.winners.front())]) {
      text += " with " + describe(*shown);
    }
  } else {
    text += " without a showdown";
  }
  return text + "!";
}

Match::Match(MatchParams params, std::vector<SeatedPlayer> seats)
    : params_(std::move(params)), seats_(std::move(seats)), memory_([&] {
        std::vector<PlayerInfo> infos;
        for (const SeatedPlayer& seat : seats_) infos.push_back(seat.info);
        return infos;
      }(), params_.history_hands) {
  if (static_cast<int>(seats_.size()) != params_.table.seats) {
    throw std::invalid_argument("holdem: " + std::to_string(seats_.size()) + " players for " +
                                std::to_string(params_.table.seats) + " seats");
  }
  if (params_.stacks.empty()) params_.stacks.assign(static_cast<std::size_t>(params_.table.seats), params_.stack);
  if (static_cast<int>(params_.stacks.size()) != params_.table.seats) {
    throw std::invalid_argument("holdem: " + std::to_string(params_.stacks.size()) + " stacks for " +
                                std::to_string(params_.table.seats) + " seats");
  }
  for (const std::int64_t stack : params_.stacks) {
    if (stack <= 0) throw std::invalid_argument("holdem: every starting stack must be positive");
  }
  Json players = Json::array();
  for (const SeatedPlayer& seat : seats_) {
    players.push_back({{"id", seat.info.id}, {"name", seat.info.name}, {"kind", seat.player->kind()}});
  }
  record_ = {{"title", "kvframe-holdem · seed " + std::to_string(params_.seed) + " · " +
                           std::to_string(params_.hands) + " hands"},
             {"seed", params_.seed},
             {"big_blind", params_.table.big_blind},
             {"modes", Json::array()},
             {"players", players},
             {"hands", Json::array()},
             {"decisions", Json::array()}};
}

void Match::play(const MatchObserver& observer) {
  for (int n = 1; n <= params_.hands; ++n) play_hand(static_cast<std::uint64_t>(n), observer);
}

void Match::pause_for_watchers(const Hand& hand, std::uint64_t number) {
  if (params_.pace_ms <= 0) return;
  for (int seat = 0; seat < params_.table.seats; ++seat) {
    seats_[static_cast<std::size_t>(seat)].player->watch(DecisionView{hand, seat, memory_, number});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(params_.pace_ms));
}

void Match::play_hand(std::uint64_t number, const MatchObserver& observer) {
  const int seats = params_.table.seats;
  const int button = static_cast<int>((number - 1) % static_cast<std::uint64_t>(seats));
  const std::vector<std::int64_t>& stacks = params_.stacks;
  DeterministicRng deck_rng(deck_seed(params_.seed, number));
  Deck deck(deck_rng);
  const std::vector<Card> deck_order = deck.order();
  Hand hand(params_.table, button, stacks, std::move(deck));

  Json hole = Json::array();
  for (const SeatState& seat : hand.seats()) hole.push_back(card_names(seat.hole));
  Json steps = Json::array();
  steps.push_back(snapshot(hand, "deal", hand_id(number) + ", " + seats_[static_cast<std::size_t>(button)].info.id +
                                             " on the button"));
  std::size_t board_shown = 0;
  std::size_t logged = 0;
  // The blinds are in the log before anyone acts.
  for (; logged < hand.log().size(); ++logged) {
    const ActionRecord& blind = hand.log()[logged];
    steps.push_back(snapshot(hand, "action", action_line(seats_[static_cast<std::size_t>(blind.seat)].info, blind)));
  }

  while (!hand.over()) {
    pause_for_watchers(hand, number);
    const int seat = hand.to_act();
    const Street street = hand.street();
    Player& player = *seats_[static_cast<std::size_t>(seat)].player;
    const DecisionView view{hand, seat, memory_, number};
    if (observer.on_turn) observer.on_turn(view);
    Decision decision = player.decide(view);
    if (!hand.check(decision.action).empty()) {
      // A player must not stall the table: an illegal action is a fold (or
      // a check when free) and is counted against it.
      decision.invalid = true;
      decision.action = hand.legal().can_check ? Action::check() : Action::fold();
    }
    if (observer.on_decision) observer.on_decision(hand, seat, decision);
    hand.apply(decision.action);

    const ActionRecord& done = hand.log()[logged++];
    Json step = snapshot(hand, "action", action_line(seats_[static_cast<std::size_t>(seat)].info, done));
    step["seat"] = seat;
    step["street"] = street_name(street);
    step["action"] = action_name(done.kind);
    step["amount"] = done.kind == ActionKind::kRaise ? done.bet_to : done.added;
    if (!decision.samples.empty()) step["decision"] = decisions_.size();
    // The step's bets are those before the street was closed, so the page
    // shows the call that ended it.
    if (hand.street() != street || hand.over()) {
      step["bets"][static_cast<std::size_t>(seat)] = done.bet_to;
    }
    steps.push_back(std::move(step));
    if (!decision.samples.empty()) decisions_.push_back({number, seat, street, std::move(decision)});
    add_street_steps(hand, board_shown, steps);
  }

  const HandResult& result = hand.result();
  if (observer.on_hand_over) observer.on_hand_over(hand, number, deck_order);
  nets_.push_back(result.net);
  memory_.record(hand, number);
  // The result shows at the table too: the history and the players' stats
  // change here, not at the next deal, so the watchers stream them now.
  pause_for_watchers(hand, number);
  const std::string line = hand_line(hand, number, memory_.players());
  if (observer.on_hand_line) observer.on_hand_line(number, line);
  Json winners = Json::array();
  for (const PotAward& award : result.awards) {
    for (int w : award.winners) winners.push_back(w);
  }
  Json result_step = snapshot(hand, "result", line);
  result_step["winners"] = winners;
  steps.push_back(std::move(result_step));
  if (observer.on_hand_end) {
    const std::string comment = observer.on_hand_end(hand, number, memory_);
    if (!comment.empty()) steps.push_back(snapshot(hand, "comment", comment));
  }
  record_["hands"].push_back({{"number", number},
                              {"id", hand_id(number)},
                              {"button", button},
                              {"start_stacks", stacks},
                              {"hole", hole},
                              {"steps", std::move(steps)},
                              {"net", result.net}});
}

}  // namespace kvframe::examples::holdem
