#include "holdem/equity.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "holdem/hand_eval.h"

namespace kvframe::examples::holdem {
namespace {

constexpr int kMaxOpponents = 8;
constexpr std::size_t kBoardCards = 5;

void check_params(const EquityParams& params) {
  if (params.opponents < 1 || params.opponents > kMaxOpponents) {
    throw std::invalid_argument("equity: opponents must be 1..8, got " + std::to_string(params.opponents));
  }
  if (params.trials < 1) throw std::invalid_argument("equity: trials must be >= 1, got " + std::to_string(params.trials));
}

// One trial's share of the pot for the hero: 1 alone best, 1/k in a k-way
// tie, 0 beaten.
double pot_share(HandValue hero, const HandValue* opponents, int count) {
  int tied = 1;
  for (int i = 0; i < count; ++i) {
    if (opponents[i] > hero) return 0.0;
    if (opponents[i] == hero) ++tied;
  }
  return 1.0 / tied;
}

}  // namespace

double equity(const std::array<Card, 2>& hole, const std::vector<Card>& board, const EquityParams& params,
              DeterministicRng& rng, const std::vector<Card>& dead) {
  const std::array<bool, kCards> known = dealt_cards("equity", hole, board, dead);
  check_params(params);
  std::vector<Card> stub;  // the cards left to deal from
  for (Card card = 0; card < kCards; ++card) {
    if (!known[card]) stub.push_back(card);
  }
  const std::size_t known_board = board.size();
  const std::size_t to_board = kBoardCards - known_board;
  const auto opponents = static_cast<std::size_t>(params.opponents);
  const std::size_t needed = to_board + 2 * opponents;
  if (needed > stub.size()) {
    throw std::invalid_argument("equity: too many dead cards to deal " + std::to_string(opponents) + " opponents");
  }

  // The hero's seven cards: hole, known board, then the board dealt each trial.
  // Each opponent's seven: two dealt cards, then the same board copied in.
  std::array<Card, 7> hero{};
  std::copy(hole.begin(), hole.end(), hero.begin());
  std::copy(board.begin(), board.end(), hero.begin() + 2);
  Card* const hero_board = hero.data() + 2;
  std::array<std::array<Card, 7>, kMaxOpponents> villains{};
  std::array<HandValue, kMaxOpponents> villain_values{};

  double won = 0.0;
  for (int trial = 0; trial < params.trials; ++trial) {
    // Partial Fisher-Yates: stub[0, needed) becomes a uniform draw. The whole
    // stub stays a permutation of the undealt cards, so the next trial can
    // shuffle on from where this one left it.
    for (std::size_t i = 0; i < needed; ++i) std::swap(stub[i], stub[i + rng.below(stub.size() - i)]);
    std::copy(stub.data(), stub.data() + to_board, hero_board + known_board);
    const HandValue hero_value = evaluate7(hero.data());
    for (std::size_t v = 0; v < opponents; ++v) {
      std::array<Card, 7>& cards = villains[v];
      cards[0] = stub[to_board + 2 * v];
      cards[1] = stub[to_board + 2 * v + 1];
      std::copy(hero_board, hero_board + kBoardCards, cards.begin() + 2);
      villain_values[v] = evaluate7(cards.data());
    }
    won += pot_share(hero_value, villain_values.data(), params.opponents);
  }
  return won / params.trials;
}

}  // namespace kvframe::examples::holdem
