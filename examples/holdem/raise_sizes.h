// The raise sizes a seat is offered, as a poker client's bet buttons offer
// them: the LLM bot picks one of these amounts (its schema lists them and
// its question names them), and the tight-aggressive bot raises by the same
// definitions. A small model that has to work out "two thirds of the pot"
// digit by digit gets digits wrong, and full and block mode part on them;
// offered sizes leave it only the choice between them (docs/your_game.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "holdem/table.h"

namespace kvframe::examples::holdem {

enum class RaiseSize {
  kOpen,         // preflop: 3 big blinds and one per limper unopened, else three times the bet
  kHalfPot,      // postflop: call, then add half the pot
  kTwoThirdsPot, // postflop: call, then add two thirds of the pot
  kPot,          // call, then add the whole pot
  kAllIn,        // the whole stack
};

// The amount to raise to for `size` in the decision now facing the seat to
// act, kept within the legal range. Requires hand.legal().can_raise.
std::int64_t raise_to(const Hand& hand, RaiseSize size);

struct RaiseOption {
  std::int64_t to = 0;
  std::string label;  // "open", "three times the bet", "half pot", "two thirds pot", "pot", "all in"
};

// The offered raises, smallest first, one per distinct amount (a size that
// reaches the whole stack is the all-in): preflop open, pot and all in;
// postflop half pot, two thirds of the pot, pot and all in. Empty when no
// raise is open.
std::vector<RaiseOption> raise_menu(const Hand& hand);

// The amounts alone, for the action schema.
std::vector<std::int64_t> raise_amounts(const std::vector<RaiseOption>& menu);

}  // namespace kvframe::examples::holdem
