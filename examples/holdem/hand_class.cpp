#include "holdem/hand_class.h"

#include <algorithm>
#include <stdexcept>

#include "holdem/hand_eval.h"

namespace kvframe::examples::holdem {
namespace {

constexpr int kTen = 8;  // rank_of() of a ten: the lowest broadway card

// Cards held per rank, and the ranks held as a 13-bit mask.
struct RankCounts {
  std::array<int, kRanks> of{};
  unsigned mask = 0;
};

RankCounts count_ranks(const std::vector<Card>& cards) {
  RankCounts counts;
  for (Card card : cards) {
    ++counts.of[static_cast<std::size_t>(rank_of(card))];
    counts.mask |= 1u << rank_of(card);
  }
  return counts;
}

std::string plural_of(int rank) { return rank_name_plural(rank); }

// A hole card of rank `paired` matching one board card, named by where that
// rank stands among the board's ranks; top pair also names the kicker.
std::string board_pair_words(int paired, int kicker, const RankCounts& board) {
  std::vector<int> ranks;  // the board's ranks, highest first
  for (int rank = kAce; rank >= 0; --rank) {
    if (board.of[static_cast<std::size_t>(rank)] > 0) ranks.push_back(rank);
  }
  if (paired == ranks.front()) return std::string("top pair, ") + rank_name(kicker) + " kicker";
  return (paired == ranks.back() ? "bottom pair, " : "middle pair, ") + plural_of(paired);
}

// The made hand (the postflop list in hand_class.h, draws aside).
std::string made_hand_words(const std::array<Card, 2>& hole, const std::vector<Card>& board, HandValue value) {
  if (value.category() >= HandCategory::kStraight) {
    std::string words = describe(value);
    if (board.size() == 5 && evaluate5(board.data()) == value) words += ", on the board";
    return words;
  }
  const RankCounts on_board = count_ranks(board);
  const auto board_count = [&on_board](int rank) { return on_board.of[static_cast<std::size_t>(rank)]; };
  const int high = std::max(rank_of(hole[0]), rank_of(hole[1]));
  const int low = std::min(rank_of(hole[0]), rank_of(hole[1]));
  // Below a straight a board card of a pocket pair's rank makes a set, two
  // make quads (caught above), none leaves the pair over or under the board.
  if (high == low) {
    if (board_count(high) == 1) return "set of " + plural_of(high);
    const bool over = (on_board.mask >> (high + 1)) == 0;  // no board rank above it
    return (over ? "overpair, " : "underpair, ") + plural_of(high);
  }
  for (int rank : {high, low}) {
    if (board_count(rank) >= 2) return "trips, " + plural_of(rank);
  }
  if (board_count(high) == 1 && board_count(low) == 1) {
    return "two pair, " + plural_of(high) + " and " + plural_of(low);
  }
  if (board_count(high) == 1) return board_pair_words(high, low, on_board);
  if (board_count(low) == 1) return board_pair_words(low, high, on_board);
  return "nothing";
}

bool has_flush_draw(const std::array<Card, 2>& hole, const std::vector<Card>& cards) {
  for (Card mine : hole) {
    const auto suited = std::count_if(cards.begin(), cards.end(), [mine](Card c) { return suit_of(c) == suit_of(mine); });
    if (suited == 4) return true;
  }
  return false;
}

// Ranks not held that would complete a straight better than the board's own
// with that rank: a straight the hole cards are part of.
int straight_out_ranks(const std::vector<Card>& board, const std::vector<Card>& cards) {
  const unsigned held = count_ranks(cards).mask, on_board = count_ranks(board).mask;
  int outs = 0;
  for (int rank = 0; rank < kRanks; ++rank) {
    const unsigned bit = 1u << rank;
    if (held & bit) continue;
    outs += best_straight_high(held | bit) > best_straight_high(on_board | bit);
  }
  return outs;
}

std::vector<std::string> draw_words(const std::array<Card, 2>& hole, const std::vector<Card>& board,
                                    const std::vector<Card>& cards, HandCategory made) {
  std::vector<std::string> draws;
  if (made < HandCategory::kFlush && has_flush_draw(hole, cards)) draws.push_back("flush draw");
  if (made < HandCategory::kStraight) {
    const int outs = straight_out_ranks(board, cards);
    if (outs >= 2) draws.push_back("open-ended straight draw");
    if (outs == 1) draws.push_back("gutshot");
  }
  return draws;
}

}  // namespace

std::string starting_hand_class(Card a, Card b) {
  const int high = std::max(rank_of(a), rank_of(b)), low = std::min(rank_of(a), rank_of(b));
  const bool suited = suit_of(a) == suit_of(b);
  const std::string suitedness = suited ? "suited" : "offsuit";
  if (high == low) return "pocket " + plural_of(high);
  if (low >= kTen) return std::string(rank_name(high)) + "-" + rank_name(low) + " " + suitedness;
  if (high == kAce) return "ace with a small kicker, " + suitedness;
  const int gap = high - low - 1;
  if (gap == 0) return suitedness + " connectors";
  if (gap == 1 && suited) return "suited one-gapper";
  return suitedness + " junk";
}

std::string hand_class(const std::array<Card, 2>& hole, const std::vector<Card>& board) {
  dealt_cards("hand_class", hole, board);  // the classes assume a real deal: throws otherwise
  if (board.empty()) return starting_hand_class(hole[0], hole[1]);
  std::vector<Card> cards(hole.begin(), hole.end());
  cards.insert(cards.end(), board.begin(), board.end());
  const HandValue value = evaluate(cards.data(), static_cast<int>(cards.size()));
  std::string words = made_hand_words(hole, board, value);
  if (board.size() == 5) return words;  // no card to come: no draw
  for (const std::string& draw : draw_words(hole, board, cards, value.category())) {
    words = words == "nothing" ? draw : words + ", " + draw;
  }
  return words;
}

}  // namespace kvframe::examples::holdem
