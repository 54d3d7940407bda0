// Sample Texas Hold'em gamecore states, shaped like Figure 5 of the
// Block-attention paper (Appendix A):
//
//   {"state": {"street": "flop", "board": ["Ah","7c","2d"], "pot": 60,
//              "button": "p3", "to_act": "p1",
//              "chips": {"p1": {"bet": 10, "remain": 990}, "p2": {...}, ...},
//              "players": [{"id": "p1", "seat": 1, ...}, ...],
//              "legal_actions": [{"action": "fold"}, ...]},
//    "history": [{"id": "hand_0001", ...}, ...],       recent hands, oldest first
//    "opponent_stats": {"p2": {"vpip": 0.27, ...}, ...}} one entry per opponent
//
// The model plays p1: only p1's hole cards are shown. This is a sample-state
// generator for exercising json_blocker, not a poker engine: the numbers are
// plausible, not the outcome of legal play.
#pragma once

#include <cstdint>
#include <string>

namespace kvframe::examples::holdem {

struct HoldemParams {
  std::uint64_t seed = 1;
  int players = 6;   // 2..9, named p1..pN
  int history = 20;  // hands kept in "history"
};

// One state as minified JSON; the same params give the same bytes.
// Throws std::invalid_argument when players is outside 2..9 or history < 0.
std::string holdem_state(const HoldemParams& params = {});

// Two consecutive states, identical except that state.chips.p2 goes from
// {"bet":10,"remain":990} to {"bet":50,"remain":950}: the paper's example of
// one block changing between frames.
struct StatePair {
  std::string previous, current;
};
StatePair figure5_pair(const HoldemParams& params = {});

}  // namespace kvframe::examples::holdem
