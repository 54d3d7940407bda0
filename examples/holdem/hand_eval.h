// A fast 5-, 6- and 7-card poker hand evaluator.
//
//   HandValue v = evaluate7(cards);          // cards: 7 distinct Cards
//   if (v > other) ...;                      // higher wins, equal splits
//   v.category() == HandCategory::kFlush
//
// Written by hand: Debian packages no poker evaluator. Method (see
// hand_eval.cpp): per-suit 13-bit rank masks and per-rank counts, a flush
// and straight found with bit tricks and a 8,192-entry table built once, no
// per-hand enumeration of the 21 five-card subsets.
#pragma once

#include <cstdint>
#include <string>

#include "holdem/cards.h"

namespace kvframe::examples::holdem {

enum class HandCategory : std::uint8_t {
  kHighCard,
  kOnePair,
  kTwoPair,
  kThreeOfAKind,
  kStraight,
  kFlush,
  kFullHouse,
  kFourOfAKind,
  kStraightFlush,  // a royal flush is the ace-high straight flush
};
constexpr int kHandCategories = 9;

// "high card", "one pair", ..., "straight flush".
const char* category_name(HandCategory category);

// The strength of the best five-card hand: a total order, higher is better,
// equal values split the pot. The category sits in the top bits, the ranks
// that break ties below it.
struct HandValue {
  std::uint32_t value = 0;

  HandCategory category() const { return static_cast<HandCategory>(value >> 24); }
  friend bool operator<(HandValue a, HandValue b) { return a.value < b.value; }
  friend bool operator>(HandValue a, HandValue b) { return a.value > b.value; }
  friend bool operator==(HandValue a, HandValue b) { return a.value == b.value; }
  friend bool operator!=(HandValue a, HandValue b) { return a.value != b.value; }
};

// The best hand among `count` (5..7) distinct cards. Cards must be valid and
// distinct (checked only in debug builds: this is the hot loop of equity).
HandValue evaluate(const Card* cards, int count);
inline HandValue evaluate7(const Card* cards) { return evaluate(cards, 7); }
inline HandValue evaluate5(const Card* cards) { return evaluate(cards, 5); }

// "two pair, kings and nines", "straight, ten high", "flush, ace high",
// "full house, queens full of fours": for history lines and commentary.
std::string describe(HandValue value);

// A rank (0 the deuce .. 12 the ace) in words: "two" .. "ace", plural "twos"
// .. "aces"; "?" for any other number.
const char* rank_name(int rank);
const char* rank_name_plural(int rank);

// The highest rank of the best straight among the ranks of a 13-bit mask
// (bit r: rank r held), the wheel (A-2-3-4-5, high card the five) included;
// -1 when the mask holds no straight.
int best_straight_high(unsigned rank_mask);

}  // namespace kvframe::examples::holdem
