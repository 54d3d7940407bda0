#include "holdem/holdem_state.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "common/deterministic_rng.h"

namespace kvframe::examples::holdem {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kStack = 1000;
constexpr std::int64_t kBigBlind = 10;
const std::vector<std::string> kStreets = {"preflop", "flop", "turn", "river"};
const std::vector<std::string> kNames = {"Ada", "Bram", "Cleo", "Dax", "Edda",
                                         "Finn", "Gus", "Hana", "Ivo"};
// Seats clockwise from the button, for a full table; shorter tables use a prefix
// (heads-up is the exception: the button posts the small blind).
const std::vector<std::string> kPositions = {"BTN", "SB", "BB", "UTG", "UTG+1",
                                             "MP",  "LJ", "HJ", "CO"};
const std::vector<std::string> kHands = {"high card", "one pair", "two pair", "three of a kind",
                                         "straight",  "flush",    "full house"};
const std::vector<std::string> kActions = {"check", "call", "bet", "raise", "fold"};

std::string player_id(int index) { return "p" + std::to_string(index + 1); }

// A shuffled 52-card deck, dealt from the back.
class Deck {
 public:
  explicit Deck(DeterministicRng& rng) {
    for (char rank : std::string("23456789TJQKA")) {
      for (char suit : std::string("cdhs")) cards_.push_back(std::string{rank, suit});
    }
    rng.shuffle(cards_);
  }
  Json deal(std::size_t count) {
    Json cards = Json::array();
    for (std::size_t i = 0; i < count; ++i) {
      cards.push_back(cards_.back());
      cards_.pop_back();
    }
    return cards;
  }

 private:
  std::vector<std::string> cards_;
};

double fraction(DeterministicRng& rng, int lo_percent, int hi_percent) {
  return rng.between(lo_percent, hi_percent) / 100.0;
}

std::string position_of(int seat, int button, int players) {
  const int from_button = (seat - button + players) % players;
  if (players == 2) return from_button == 0 ? "BTN" : "BB";
  return kPositions[static_cast<std::size_t>(from_button)];
}

Json hand_history(DeterministicRng& rng, int players, int hands) {
  Json history = Json::array();
  for (int i = 0; i < hands; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "hand_%04d", i + 1);
    Deck deck(rng);
    const std::string winner = player_id(rng.between(0, players - 1));
    const std::int64_t pot = rng.between(3, 60) * kBigBlind;
    const bool showdown = rng.chance(0.4);
    const std::string& made = rng.pick(kHands);
    history.push_back({{"id", id},
                       {"winner", winner},
                       {"pot", pot},
                       {"showdown", showdown},
                       {"board", deck.deal(5)},
                       {"summary", winner + " won " + std::to_string(pot) +
                                       (showdown ? " at showdown with " + made : " uncontested")}});
  }
  return history;
}

Json opponent_stats(DeterministicRng& rng, int players) {
  Json stats = Json::object();
  for (int i = 1; i < players; ++i) {
    const int vpip = rng.between(12, 60);
    Json entry;
    entry["hands"] = rng.between(50, 500);
    entry["vpip"] = vpip / 100.0;
    entry["pfr"] = fraction(rng, 5, vpip);
    entry["aggression"] = rng.between(5, 40) / 10.0;
    entry["showdown_win"] = fraction(rng, 35, 65);
    entry["last_action"] = rng.pick(kActions);
    stats[player_id(i)] = entry;
  }
  return stats;
}

Json build_state(const HoldemParams& params) {
  if (params.players < 2 || params.players > 9) {
    throw std::invalid_argument("holdem: players must be 2..9, got " +
                                std::to_string(params.players));
  }
  if (params.history < 0) throw std::invalid_argument("holdem: history must be >= 0");
  DeterministicRng rng(params.seed);
  const int players = params.players;
  Deck deck(rng);
  const int button = rng.between(0, players - 1);
  const auto street = static_cast<std::size_t>(rng.between(0, 3));
  // Every player still in put the same into the earlier streets.
  const std::int64_t earlier = static_cast<std::int64_t>(street) * 2 * kBigBlind;

  Json chips = Json::object(), seats = Json::array();
  std::int64_t pot = 0, highest_bet = 0;
  for (int i = 0; i < players; ++i) {
    const bool folded = i != 0 && rng.chance(0.25);  // p1, the model, is still in
    const std::int64_t bet = folded ? 0 : rng.between(0, 5) * kBigBlind;
    chips[player_id(i)] = {{"bet", bet}, {"remain", kStack - earlier - bet}};
    pot += earlier + bet;
    highest_bet = std::max(highest_bet, bet);
    seats.push_back({{"id", player_id(i)},
                     {"seat", i + 1},
                     {"name", kNames[static_cast<std::size_t>(i)]},
                     {"position", position_of(i, button, players)},
                     {"status", folded ? "folded" : "active"},
                     {"hole_cards", i == 0 ? deck.deal(2) : Json::array()}});
  }
  const std::int64_t to_call = highest_bet - chips["p1"]["bet"].get<std::int64_t>();
  const std::int64_t stack = chips["p1"]["remain"].get<std::int64_t>();
  Json legal = Json::array();
  legal.push_back({{"action", "fold"}});
  legal.push_back(to_call == 0 ? Json{{"action", "check"}} : Json{{"action", "call"}, {"amount", to_call}});
  legal.push_back({{"action", "raise"},
                   {"min", std::min(stack, highest_bet + 2 * kBigBlind)},
                   {"max", stack}});

  Json state;
  state["street"] = kStreets[street];
  state["board"] = deck.deal(street == 0 ? 0 : street + 2);
  state["pot"] = pot;
  state["button"] = player_id(button);
  state["to_act"] = "p1";
  state["chips"] = chips;
  state["players"] = seats;
  state["legal_actions"] = legal;

  Json root;
  root["state"] = state;
  root["history"] = hand_history(rng, players, params.history);
  root["opponent_stats"] = opponent_stats(rng, players);
  return root;
}

}  // namespace

std::string holdem_state(const HoldemParams& params) { return build_state(params).dump(); }

StatePair figure5_pair(const HoldemParams& params) {
  Json state = build_state(params);
  Json& p2 = state["state"]["chips"]["p2"];
  StatePair pair;
  p2 = {{"bet", 10}, {"remain", 990}};
  pair.previous = state.dump();
  p2 = {{"bet", 50}, {"remain", 950}};
  pair.current = state.dump();
  return pair;
}

}  // namespace kvframe::examples::holdem
