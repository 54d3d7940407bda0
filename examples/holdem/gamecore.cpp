#include "holdem/gamecore.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "holdem/seat_read.h"

namespace kvframe::examples::holdem {
namespace {

// Insertion order is the document order: the block order json_blocker sees.
using Json = nlohmann::ordered_json;

const char* const kNames[kMaxSeats] = {"Ada", "Bram", "Cleo", "Dax", "Edda", "Finn", "Gus", "Hana", "Ivo"};

// The seats between the big blind and the button, first to last: the first is
// UTG, the rest take the latest names (six-handed that is UTG, HJ, CO).
const char* const kMiddlePositions[] = {"UTG", "UTG+1", "MP", "LJ", "HJ", "CO"};
constexpr std::size_t kMiddleCount = sizeof kMiddlePositions / sizeof kMiddlePositions[0];

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

// Seats dealt in, clockwise from the small blind: the preflop order of the
// blinds and then everyone else, the button last.
std::vector<int> seats_from_small_blind(const Hand& hand) {
  const int seats = hand.config().seats;
  std::vector<int> order;
  for (int k = 0; k < seats; ++k) {
    const int seat = (hand.small_blind_seat() + k) % seats;
    if (hand.seats()[static_cast<std::size_t>(seat)].in_hand) order.push_back(seat);
  }
  return order;
}

// Position names per seat ("" for seats sitting out). Heads-up the button
// posts the small blind, so that seat is "BTN". The last seat to act after
// the flop is "BTN" even when the button itself sat out (a dead button): the
// name tells the LLM the acting order.
std::vector<std::string> position_names(const Hand& hand) {
  std::vector<std::string> names(static_cast<std::size_t>(hand.config().seats));
  std::vector<int> order = seats_from_small_blind(hand);
  const auto name = [&](int seat, const char* text) { names[static_cast<std::size_t>(seat)] = text; };
  if (order.size() == 2) {
    name(order[0], "BTN");
    name(order[1], "BB");
    return names;
  }
  name(order[0], "SB");
  name(order[1], "BB");
  name(order.back(), "BTN");
  order.erase(order.begin(), order.begin() + 2);
  order.pop_back();
  for (std::size_t i = 0; i < order.size(); ++i) {
    name(order[i], i == 0 ? "UTG" : kMiddlePositions[kMiddleCount - order.size() + i]);
  }
  return names;
}

const char* status_name(const SeatState& seat) {
  if (!seat.in_hand) return "out";
  if (seat.folded) return "folded";
  if (seat.all_in) return "all_in";
  return "active";
}

// How many streets past preflop the board shows: 0 (none dealt) .. 3 (river).
int streets_dealt(std::size_t board_cards) { return board_cards >= 3 ? static_cast<int>(board_cards) - 2 : 0; }

// "flop Ah 7c 2d", "turn 9s", "river Kd": where a street's actions begin.
std::string street_marker(int street, const std::vector<Card>& board) {
  const std::size_t last = static_cast<std::size_t>(street) + 1;  // flop 2, turn 3, river 4
  const std::size_t first = street == 1 ? 0 : last;
  std::string marker = street_name(static_cast<Street>(street));
  for (std::size_t i = first; i <= last; ++i) marker += " " + card_name(board[i]);
  return marker;
}

// This hand's action lines, each street after the first opened by its marker
// so a line's amounts ("raise 30": to 30 on that street) read unambiguously.
Json action_lines(const Hand& hand, const std::vector<PlayerInfo>& players) {
  Json lines = Json::array();
  int marked = 0;
  const auto mark_through = [&](int street) {
    for (; marked < street; ++marked) lines.push_back(street_marker(marked + 1, hand.board()));
  };
  for (const ActionRecord& record : hand.log()) {
    mark_through(static_cast<int>(record.street));
    lines.push_back(action_line(players[static_cast<std::size_t>(record.seat)], record));
  }
  mark_through(streets_dealt(hand.board().size()));  // streets dealt with no action yet
  return lines;
}

// The viewer's options: none while another seat is to act (or the hand is over).
Json legal_actions_json(const Hand& hand, int viewer) {
  Json actions = Json::array();
  if (hand.to_act() != viewer) return actions;
  const LegalActions legal = hand.legal();
  actions.push_back({{"action", "fold"}});
  if (legal.can_check) {
    actions.push_back({{"action", "check"}});
  } else {
    actions.push_back({{"action", "call"}, {"amount", legal.call_amount}});
  }
  if (legal.can_raise) {
    actions.push_back({{"action", "raise"}, {"min", legal.min_raise_to}, {"max", legal.max_raise_to}});
  }
  return actions;
}

Json state_json(const Hand& hand, int viewer, const std::vector<PlayerInfo>& players, std::uint64_t hand_number) {
  const std::vector<std::string> positions = position_names(hand);
  Json chips = Json::object(), seats = Json::array();
  for (std::size_t i = 0; i < players.size(); ++i) {
    const SeatState& seat = hand.seats()[i];
    chips[players[i].id] = {{"bet", seat.bet}, {"remain", seat.stack}};
    seats.push_back(
        {{"id", players[i].id},
         {"seat", i + 1},
         {"name", players[i].name},
         {"position", positions[i]},
         {"status", status_name(seat)},
         {"hole_cards", static_cast<int>(i) == viewer ? card_names(seat.hole) : std::vector<std::string>{}}});
  }
  Json state;
  state["hand"] = hand_id(hand_number);
  state["street"] = street_name(hand.street());
  state["pot"] = hand.pot();
  state["button"] = players[static_cast<std::size_t>(hand.button())].id;
  state["to_act"] = hand.over() ? Json() : Json(players[static_cast<std::size_t>(hand.to_act())].id);
  // After the scalars: they merge into one block, which one action changes.
  state["board"] = card_names(hand.board());
  state["chips"] = std::move(chips);
  state["players"] = std::move(seats);
  state["actions"] = action_lines(hand, players);
  state["legal_actions"] = legal_actions_json(hand, viewer);
  return state;
}

// The history's shorthand for an action: "p3 r30" (raise to 30), "p4 f", "p1 x"
// (check), "p1 c"; " allin" when it put the last chip in. Blinds are left out:
// the button says who posted them.
std::string compact_action(const PlayerInfo& player, const ActionRecord& record) {
  std::string text = player.id + " ";
  switch (record.kind) {
    case ActionKind::kFold: text += "f"; break;
    case ActionKind::kCheck: text += "x"; break;
    case ActionKind::kCall: text += "c"; break;
    case ActionKind::kRaise: text += "r" + std::to_string(record.bet_to); break;
    case ActionKind::kSmallBlind:
    case ActionKind::kBigBlind: return "";
  }
  if (record.all_in) text += " allin";
  return text;
}

bool is_blind(ActionKind kind) { return kind == ActionKind::kSmallBlind || kind == ActionKind::kBigBlind; }

// {"preflop": "p3 r30, p4 f, p1 c", "flop": "p1 x, p3 r40, p1 f", "turn":
// "checked"}. Folds before anyone entered the pot say little (vpip counts
// them) and are most of a folded hand's text, so they are left out, as are
// streets without an action left.
Json compact_actions(const Hand& hand, const std::vector<PlayerInfo>& players) {
  struct StreetActions {
    std::vector<std::string> lines;
    bool only_checks = true;
  };
  std::vector<StreetActions> streets(4);
  bool pot_opened = false;  // a call or raise after the blinds
  for (const ActionRecord& record : hand.log()) {
    if (is_blind(record.kind)) continue;
    if (record.kind == ActionKind::kFold && !pot_opened) continue;
    pot_opened = pot_opened || record.kind == ActionKind::kCall || record.kind == ActionKind::kRaise;
    StreetActions& street = streets[static_cast<std::size_t>(record.street)];
    street.lines.push_back(compact_action(players[static_cast<std::size_t>(record.seat)], record));
    street.only_checks = street.only_checks && record.kind == ActionKind::kCheck;
  }
  Json actions = Json::object();
  for (std::size_t i = 0; i < streets.size(); ++i) {
    if (streets[i].lines.empty()) continue;
    actions[street_name(static_cast<Street>(i))] = streets[i].only_checks ? "checked" : join(streets[i].lines, ", ");
  }
  return actions;
}

bool won_any_pot(const HandResult& result, int seat) {
  for (const PotAward& award : result.awards) {
    for (int winner : award.winners) {
      if (winner == seat) return true;
    }
  }
  return false;
}

// The part of a seat's commitment above everyone else's: no one could win
// it, so it went back.
std::int64_t uncalled(const Hand& hand, std::size_t seat) {
  std::int64_t others = 0;
  for (std::size_t i = 0; i < hand.seats().size(); ++i) {
    if (i != seat) others = std::max(others, hand.seats()[i].committed);
  }
  return std::max<std::int64_t>(0, hand.seats()[seat].committed - others);
}

// One finished hand, compact (40-80 tokens): it is one of hundreds of blocks.
Json history_entry(const Hand& hand, const std::vector<PlayerInfo>& players, std::uint64_t hand_number) {
  const HandResult& result = hand.result();
  // The pot fought for; a bet nobody called went back to its owner. A
  // winner's amount is what its stack took from it, odd chips included.
  std::int64_t pot = 0;
  for (const PotAward& award : result.awards) pot += award.amount;
  Json winners = Json::object();
  for (std::size_t i = 0; i < players.size(); ++i) {
    if (!won_any_pot(result, static_cast<int>(i))) continue;
    winners[players[i].id] = result.net[i] + hand.seats()[i].committed - uncalled(hand, i);
  }
  Json entry;
  entry["id"] = hand_id(hand_number);
  entry["button"] = players[static_cast<std::size_t>(hand.button())].id;
  entry["board"] = join(card_names(hand.board()), " ");
  entry["actions"] = compact_actions(hand, players);
  entry["pot"] = pot;
  entry["winners"] = std::move(winners);
  if (result.showdown) {
    Json shown = Json::object();
    for (std::size_t i = 0; i < players.size(); ++i) {
      if (i >= result.shown.size() || !result.shown[i]) continue;
      shown[players[i].id] = join(card_names(hand.seats()[i].hole), " ") + ", " + describe(*result.shown[i]);
    }
    entry["showdown"] = std::move(shown);
  }
  return entry;
}

// Rates print with two decimals at most, so a block's bytes change only when
// a rate moves visibly.
double rounded(double value) { return std::round(value * 100.0) / 100.0; }
double rate(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? rounded(static_cast<double>(part) / static_cast<double>(whole)) : 0.0;
}

bool played(const Hand& hand, int seat, Street street, ActionKind kind) {
  for (const ActionRecord& record : hand.log()) {
    if (record.seat == seat && record.street == street && record.kind == kind) return true;
  }
  return false;
}

// The whole number a JSON value holds; 30.0 counts, as in JSON Schema.
std::optional<std::int64_t> whole_number(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(number);
  }
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    const double number = value.get<double>();
    if (std::floor(number) == number && std::fabs(number) < 9.0e18) return static_cast<std::int64_t>(number);
  }
  return std::nullopt;
}

// The viewer's own read of its decision; {} while another seat is to act or
// once the hand is over, like legal_actions, so the key and its block stay.
std::string your_read_json(const Hand& hand, int viewer, std::uint64_t hand_number) {
  const std::optional<SeatRead> read = shown_read(hand, viewer, hand_number);
  return read ? seat_read_json(*read) : "{}";
}

Json action_branch(const char* action) {
  return {{"type", "object"},
          {"properties", {{"action", {{"const", action}}}}},
          {"required", {"action"}},
          {"additionalProperties", false}};
}

}  // namespace

std::vector<PlayerInfo> default_players(int seats) {
  if (seats < kMinSeats || seats > kMaxSeats) {
    throw std::invalid_argument("holdem: seats must be 2..9, got " + std::to_string(seats));
  }
  std::vector<PlayerInfo> players;
  for (int i = 0; i < seats; ++i) players.push_back({"p" + std::to_string(i + 1), kNames[i]});
  return players;
}

std::string hand_id(std::uint64_t hand_number) {
  std::string digits = std::to_string(hand_number);
  if (digits.size() < 4) digits.insert(0, 4 - digits.size(), '0');
  return "hand_" + digits;
}

MatchMemory::MatchMemory(std::vector<PlayerInfo> players, int history_hands)
    : players_(std::move(players)),
      history_hands_(static_cast<std::size_t>(history_hands < 0 ? 0 : history_hands)),
      history_json_("[]"),
      stats_(players_.size()) {
  for (const PlayerStats& stats : stats_) stats_json_.push_back(stats_json(stats));
}

void MatchMemory::record(const Hand& hand, std::uint64_t hand_number) {
  if (!hand.over()) throw std::invalid_argument("MatchMemory::record: the hand is not over");
  if (hand.seats().size() != players_.size()) {
    throw std::invalid_argument("MatchMemory::record: the hand has " + std::to_string(hand.seats().size()) +
                                " seats, the match " + std::to_string(players_.size()));
  }
  ++hands_recorded_;
  big_blind_ = hand.config().big_blind;
  if (history_hands_ > 0) {
    if (history_.size() == history_hands_) history_.erase(history_.begin());
    history_.push_back(history_entry(hand, players_, hand_number).dump());
  }
  history_json_ = "[" + join(history_, ",") + "]";
  update_stats(hand);
}

void MatchMemory::update_stats(const Hand& hand) {
  const HandResult& result = hand.result();
  const bool flop_dealt = hand.board().size() >= 3;
  for (std::size_t i = 0; i < players_.size(); ++i) {
    const SeatState& seat = hand.seats()[i];
    if (!seat.in_hand) continue;
    const int s = static_cast<int>(i);
    PlayerStats& stats = stats_[i];
    ++stats.hands;
    const bool raised_preflop = played(hand, s, Street::kPreflop, ActionKind::kRaise);
    stats.vpip += raised_preflop || played(hand, s, Street::kPreflop, ActionKind::kCall);
    stats.pfr += raised_preflop;
    stats.saw_flop += flop_dealt && !played(hand, s, Street::kPreflop, ActionKind::kFold);
    if (result.showdown && !seat.folded) {
      ++stats.showdowns;
      stats.showdowns_won += won_any_pot(result, s);
    }
    stats.net += result.net[i];
    for (const ActionRecord& record : hand.log()) {
      if (record.seat != s || is_blind(record.kind)) continue;
      stats.raises += record.kind == ActionKind::kRaise;
      stats.calls += record.kind == ActionKind::kCall;
      stats.last_action = action_name(record.kind);
    }
    stats_json_[i] = stats_json(stats);
  }
}

std::string MatchMemory::stats_json(const PlayerStats& stats) const {
  Json json;
  json["hands"] = stats.hands;
  json["vpip"] = rate(stats.vpip, stats.hands);
  json["pfr"] = rate(stats.pfr, stats.hands);
  // Bets and raises per call; with no call yet, the raise count itself.
  json["aggression"] = rate(stats.raises, stats.calls > 0 ? stats.calls : 1);
  json["wtsd"] = rate(stats.showdowns, stats.saw_flop);  // went to showdown, of the flops seen
  json["won_at_showdown"] = rate(stats.showdowns_won, stats.showdowns);
  json["net_bb"] = rounded(static_cast<double>(stats.net) / static_cast<double>(big_blind_));
  json["last_action"] = stats.last_action;
  return json.dump();
}

const std::vector<PlayerInfo>& MatchMemory::players() const { return players_; }

std::uint64_t MatchMemory::hands_recorded() const { return hands_recorded_; }

std::string MatchMemory::history_json() const { return history_json_; }

std::string MatchMemory::opponent_stats_json(int viewer) const {
  std::string out = "{";
  for (std::size_t i = 0; i < players_.size(); ++i) {
    if (static_cast<int>(i) == viewer) continue;
    if (out.size() > 1) out += ",";
    out += Json(players_[i].id).dump() + ":" + stats_json_[i];
  }
  return out + "}";
}

std::string gamecore_json(const Hand& hand, int viewer, const MatchMemory& memory, std::uint64_t hand_number) {
  const std::vector<PlayerInfo>& players = memory.players();
  if (players.size() != hand.seats().size()) {
    throw std::invalid_argument("gamecore_json: the hand has " + std::to_string(hand.seats().size()) +
                                " seats, the match " + std::to_string(players.size()));
  }
  if (viewer < 0 || viewer >= static_cast<int>(players.size())) {
    throw std::invalid_argument("gamecore_json: viewer " + std::to_string(viewer) + " is not a seat");
  }
  // history and stats are kept as text: the largest part of the document is
  // not re-serialized at every decision.
  return "{\"state\":" + state_json(hand, viewer, players, hand_number).dump() +
         ",\"history\":" + memory.history_json() + ",\"opponent_stats\":" + memory.opponent_stats_json(viewer) +
         ",\"your_read\":" + your_read_json(hand, viewer, hand_number) + "}";
}

std::string holdem_rules_json() {
  // holdem.rules.json's text (a test checks they agree): embedded so an
  // installed binary needs no source tree.
  return R"({
  "pin": ["state.chips.*", "state.players[*]", "history[*]", "opponent_stats.*", "your_read"]
}
)";
}

std::string action_schema_json(const LegalActions& legal, const std::vector<std::int64_t>& raise_amounts) {
  Json branches = Json::array();
  branches.push_back(action_branch("fold"));
  branches.push_back(action_branch(legal.can_check ? "check" : "call"));
  if (legal.can_raise) {
    Json raise = action_branch("raise");
    raise["properties"]["amount"] =
        raise_amounts.empty()
            ? Json{{"type", "integer"}, {"minimum", legal.min_raise_to}, {"maximum", legal.max_raise_to}}
            : Json{{"type", "integer"}, {"enum", raise_amounts}};
    raise["required"].push_back("amount");
    branches.push_back(std::move(raise));
  }
  return Json{{"anyOf", std::move(branches)}}.dump();
}

std::optional<Action> action_from_json(std::string_view json, const LegalActions& legal,
                                       const std::vector<std::int64_t>& raise_amounts) {
  const Json answer = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object()) return std::nullopt;  // also when not JSON (discarded)
  const auto name = answer.find("action");
  if (name == answer.end() || !name->is_string()) return std::nullopt;
  const std::string& kind = name->get_ref<const std::string&>();
  if (kind == "raise") {
    const auto amount = answer.find("amount");
    if (!legal.can_raise || answer.size() != 2 || amount == answer.end()) return std::nullopt;
    const std::optional<std::int64_t> to = whole_number(*amount);
    if (!to || *to < legal.min_raise_to || *to > legal.max_raise_to) return std::nullopt;
    const bool offered =
        raise_amounts.empty() || std::find(raise_amounts.begin(), raise_amounts.end(), *to) != raise_amounts.end();
    if (!offered) return std::nullopt;
    return Action::raise_to(*to);
  }
  if (answer.size() != 1) return std::nullopt;
  if (kind == "fold") return Action::fold();
  if (kind == "check" && legal.can_check) return Action::check();
  if (kind == "call" && !legal.can_check) return Action::call();
  return std::nullopt;
}

std::string action_json(const Action& action) {
  Json answer = {{"action", action_name(action.kind)}};
  if (action.kind == ActionKind::kRaise) answer["amount"] = action.amount;
  return answer.dump();
}

std::string action_line(const PlayerInfo& player, const ActionRecord& record) {
  std::string line = player.id + " " + action_name(record.kind);
  switch (record.kind) {
    case ActionKind::kRaise: line += " " + std::to_string(record.bet_to); break;
    case ActionKind::kCall:
    case ActionKind::kSmallBlind:
    case ActionKind::kBigBlind: line += " " + std::to_string(record.added); break;
    case ActionKind::kFold:
    case ActionKind::kCheck: break;
  }
  if (record.all_in) line += " (all in)";
  return line;
}

}  // namespace kvframe::examples::holdem
