// Monte Carlo equity: the share of the pot a hand wins on average against
// opponents holding random cards, the board completed at random.
#pragma once

#include <array>
#include <vector>

#include "common/deterministic_rng.h"
#include "holdem/cards.h"

namespace kvframe::examples::holdem {

struct EquityParams {
  int opponents = 1;  // 1..8 opponents still in the hand
  int trials = 2000;  // deals sampled
};

// In [0, 1]: wins count 1, a split among k winners 1/k. `board` holds 0, 3,
// 4 or 5 cards; `dead` cards (known folded cards, if any) are not dealt.
// Throws std::invalid_argument on duplicate or invalid cards, a bad board
// size, opponents outside 1..8, trials < 1, or too few cards left to deal.
// Deterministic: the same rng state gives the same result.
double equity(const std::array<Card, 2>& hole, const std::vector<Card>& board, const EquityParams& params,
              DeterministicRng& rng, const std::vector<Card>& dead = {});

}  // namespace kvframe::examples::holdem
