// The seat's own read of its decision: what that seat knows, already worked
// out by the engine, as a real game gives its NPC. The gamecore shows it as
// its own block ("your_read"), so the LLM bot reads its hand's strength and
// the price of a call instead of deriving them from card strings.
//
//   "your_read": {"hand": "top pair, king kicker", "equity_pct": 62, "opponents": 2,
//                 "to_call": 40, "pot_odds_pct": 25, "call_edge_pct": 37, "spr": 4.2}
//
// call_edge_pct is equity_pct minus pot_odds_pct: a call pays in the long run
// when it is above 0. A game compares its numbers before showing them, as a
// poker HUD does, rather than leave a small model to subtract.
//
// Only the seat's own cards, the board and public chip counts enter it:
// nothing of the other seats' hole cards, nothing of any bot's decision.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/deterministic_rng.h"
#include "holdem/table.h"

namespace kvframe::examples::holdem {

// Monte Carlo deals per decision: the tight-aggressive bot's default and the
// read's, so both estimate with the same precision.
constexpr int kDecisionTrials = 600;

// Opponents of `seat` dealt in and not folded: all-in ones still contest the pot.
int opponents_in(const Hand& hand, int seat);

// The share of the pot `seat`'s hole cards win against opponents_in() random
// hands, the board completed at random (equity.h): the one estimate the
// tight-aggressive bot and the read use. Deterministic for an rng state.
double seat_equity(const Hand& hand, int seat, int trials, DeterministicRng& rng);

// The share of the final pot a call is: to_call / (pot + to_call); 0 when
// nothing is to call.
double pot_odds(std::int64_t to_call, std::int64_t pot);

struct SeatRead {
  std::string hand;          // hand_class() of the seat's cards and the board
  double equity = 0;         // seat_equity(), in [0, 1]
  int opponents = 0;         // opponents_in(): whom the equity is against
  std::int64_t to_call = 0;  // chips a call adds (all of the stack when short)
  double pot_odds = 0;       // pot_odds(to_call, pot)
  // Effective stack over the pot: the smaller of the seat's chips behind and
  // the largest behind any opponent still in, before the call.
  double spr = 0;
};

// The read of the seat to act (std::invalid_argument for another seat, or
// when the hand is over), its equity drawn from `rng`.
SeatRead seat_read(const Hand& hand, int seat, DeterministicRng& rng, int trials = kDecisionTrials);

// The rng seed of the read in the gamecore: one per hand, seat and street,
// so the equity shown moves only when the street or the opponents in change.
std::uint64_t seat_read_seed(std::uint64_t hand_number, int seat, Street street);

// The read the gamecore shows `viewer` (seeded by seat_read_seed()), or
// nullopt while another seat is to act or once the hand is over.
std::optional<SeatRead> shown_read(const Hand& hand, int viewer, std::uint64_t hand_number);

// The read as the gamecore's block, numbers rounded so its text is stable:
// equity, pot odds and their difference in whole percent, the SPR to one
// decimal.
std::string seat_read_json(const SeatRead& read);

// The same numbers as one sentence for the question, e.g. "Your read: top
// pair, king kicker; equity 62% against 2 opponents; to call 40: pot odds
// 25%, call edge +37% (a call pays); SPR 4.2." The question is the part of the prompt a
// query-scope adapter runs on in both modes: numbers a decision rests on
// are read there alike, not through block KV that full and block mode
// encode differently.
std::string seat_read_sentence(const SeatRead& read);

}  // namespace kvframe::examples::holdem
