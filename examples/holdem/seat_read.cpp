#include "holdem/seat_read.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "holdem/equity.h"
#include "holdem/hand_class.h"

namespace kvframe::examples::holdem {
namespace {

// The largest stack behind among `seat`'s opponents still in.
std::int64_t deepest_opponent_stack(const Hand& hand, int seat) {
  std::int64_t deepest = 0;
  for (std::size_t i = 0; i < hand.seats().size(); ++i) {
    const SeatState& other = hand.seats()[i];
    if (static_cast<int>(i) != seat && other.in_hand && !other.folded) deepest = std::max(deepest, other.stack);
  }
  return deepest;
}

int whole_percent(double share) { return static_cast<int>(std::lround(share * 100.0)); }

double one_decimal(double value) { return std::round(value * 10.0) / 10.0; }

// The shown numbers' difference, so the read never disagrees with itself.
int call_edge_percent(const SeatRead& read) { return whole_percent(read.equity) - whole_percent(read.pot_odds); }

}  // namespace

int opponents_in(const Hand& hand, int seat) {
  int count = 0;
  for (std::size_t i = 0; i < hand.seats().size(); ++i) {
    const SeatState& other = hand.seats()[i];
    count += static_cast<int>(i) != seat && other.in_hand && !other.folded;
  }
  return count;
}

double seat_equity(const Hand& hand, int seat, int trials, DeterministicRng& rng) {
  const SeatState& me = hand.seats()[static_cast<std::size_t>(seat)];
  EquityParams params;
  params.opponents = opponents_in(hand, seat);
  params.trials = trials;
  return equity({me.hole[0], me.hole[1]}, hand.board(), params, rng);
}

double pot_odds(std::int64_t to_call, std::int64_t pot) {
  return to_call > 0 ? static_cast<double>(to_call) / static_cast<double>(pot + to_call) : 0.0;
}

SeatRead seat_read(const Hand& hand, int seat, DeterministicRng& rng, int trials) {
  if (hand.over() || seat != hand.to_act()) {
    throw std::invalid_argument("seat_read: seat " + std::to_string(seat) + " is not the seat to act");
  }
  const SeatState& me = hand.seats()[static_cast<std::size_t>(seat)];
  SeatRead read;
  read.hand = hand_class({me.hole[0], me.hole[1]}, hand.board());
  read.equity = seat_equity(hand, seat, trials, rng);
  read.opponents = opponents_in(hand, seat);
  read.to_call = hand.legal().call_amount;
  read.pot_odds = pot_odds(read.to_call, hand.pot());
  const std::int64_t effective_stack = std::min(me.stack, deepest_opponent_stack(hand, seat));
  read.spr = static_cast<double>(effective_stack) / static_cast<double>(hand.pot());
  return read;
}

std::uint64_t seat_read_seed(std::uint64_t hand_number, int seat, Street street) {
  return hand_number << 8 | static_cast<std::uint64_t>(seat) << 2 | static_cast<std::uint64_t>(street);
}

std::optional<SeatRead> shown_read(const Hand& hand, int viewer, std::uint64_t hand_number) {
  if (hand.over() || hand.to_act() != viewer) return std::nullopt;
  DeterministicRng rng(seat_read_seed(hand_number, viewer, hand.street()));
  return seat_read(hand, viewer, rng);
}

std::string seat_read_json(const SeatRead& read) {
  nlohmann::ordered_json json;
  json["hand"] = read.hand;
  json["equity_pct"] = whole_percent(read.equity);
  json["opponents"] = read.opponents;
  json["to_call"] = read.to_call;
  json["pot_odds_pct"] = whole_percent(read.pot_odds);
  json["call_edge_pct"] = call_edge_percent(read);
  json["spr"] = one_decimal(read.spr);
  return json.dump();
}

std::string seat_read_sentence(const SeatRead& read) {
  std::ostringstream out;
  out << "Your read: " << read.hand << "; equity " << whole_percent(read.equity) << "% against " << read.opponents
      << (read.opponents == 1 ? " opponent; " : " opponents; ");
  if (read.to_call > 0) {
    const int edge = call_edge_percent(read);
    // The edge's sign in words a model already knows the sense of.
    const char* verdict = edge > 0 ? "a call pays" : edge < 0 ? "a call loses" : "break-even";
    out << "to call " << read.to_call << ": pot odds " << whole_percent(read.pot_odds) << "%, call edge "
        << (edge > 0 ? "+" : "") << edge << "% (" << verdict << "); ";
  } else {
    out << "nothing to call; ";
  }
  out << "SPR " << one_decimal(read.spr) << ".";
  return out.str();
}

}  // namespace kvframe::examples::holdem
