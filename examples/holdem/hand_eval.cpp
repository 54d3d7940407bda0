// The hand evaluator, written by hand: Debian packages no poker evaluator.
//
// Method. Each card adds a precomputed 64-bit word to the hand: 16 bits per
// suit holding that suit's 13-bit rank mask and, above it, the suit's card
// count, so one add per card builds the four suit masks and finds a flush
// (a count of five or more). From the four suit masks, plain AND/OR give the
// ranks held in at least one, two, three and four suits: pairs, trips and
// quads with no per-rank histogram walk. Two tables over all 8,192 rank
// masks, built once, do the rest: the highest straight in a mask (the wheel
// A-2-3-4-5 included) and the mask's top five ranks packed as nibbles (the
// kickers). Categories are tested from the top down; with at most seven
// cards a flush excludes quads and a full house (they would need an eighth
// card), so a flush returns at once. No five-card subset is ever enumerated.
//
// HandValue layout: the category in bits 24..27, then up to five ranks
// (0 = deuce .. 12 = ace) as nibbles in bits 16..19, 12..15, ..., 0..3, most
// significant first: the ranks that decide ties for that category, unused
// nibbles zero. Comparing values is then the poker order, and suits never
// enter a value, so hands with the same five ranks and category are equal.
#include "holdem/hand_eval.h"

#include <array>
#include <cassert>

namespace kvframe::examples::holdem {
namespace {

constexpr int kMasks = 1 << kRanks;
constexpr int kFive = 3;
constexpr unsigned kWheel = 1u << kAce | 0xFu;  // A 2 3 4 5

// A hand is the sum of its cards' words: 16 bits per suit (suit s from bit
// 16s), the suit's 13-bit rank mask, then in the lane's top three bits how
// many of the hand's cards have that suit (at most 7, so never a carry into
// the next lane). Cards are distinct, so adding a card sets its rank bit.
constexpr int kLaneBits = 16;
constexpr int kCountShift = kRanks;
constexpr std::uint64_t kEveryLane = 0x0001'0001'0001'0001;

constexpr std::array<std::uint64_t, kCards> make_card_words() {
  std::array<std::uint64_t, kCards> words{};
  for (int card = 0; card < kCards; ++card) {
    const auto c = static_cast<Card>(card);
    const std::uint64_t lane = std::uint64_t{1} << rank_of(c) | std::uint64_t{1} << kCountShift;
    words[static_cast<std::size_t>(card)] = lane << (kLaneBits * suit_of(c));
  }
  return words;
}
constexpr std::array<std::uint64_t, kCards> kCardWords = make_card_words();

struct RankTables {
  // Highest card of the best straight in a rank mask (a rank >= 3), 0 = none.
  std::array<std::uint8_t, kMasks> straight_high{};
  // The mask's top five ranks as nibbles, highest in bits 16..19; fewer
  // ranks leave the low nibbles zero.
  std::array<std::uint32_t, kMasks> top_five{};
};

std::uint8_t highest_straight(unsigned mask) {
  for (int high = kAce; high >= 4; --high) {
    const unsigned run = 0x1Fu << (high - 4);
    if ((mask & run) == run) return static_cast<std::uint8_t>(high);
  }
  return (mask & kWheel) == kWheel ? static_cast<std::uint8_t>(kFive) : 0;
}

std::uint32_t pack_top_five(unsigned mask) {
  std::uint32_t packed = 0;
  int shift = 16;
  for (int rank = kAce; rank >= 0 && shift >= 0; --rank) {
    if (mask & (1u << rank)) {
      packed |= static_cast<std::uint32_t>(rank) << shift;
      shift -= 4;
    }
  }
  return packed;
}

const RankTables& rank_tables() {
  static const RankTables tables = [] {
    RankTables t;
    for (unsigned mask = 0; mask < kMasks; ++mask) {
      t.straight_high[mask] = highest_straight(mask);
      t.top_five[mask] = pack_top_five(mask);
    }
    return t;
  }();
  return tables;
}

unsigned suit_ranks(std::uint64_t hand, int suit) {
  return static_cast<unsigned>(hand >> (kLaneBits * suit)) & (kMasks - 1);
}

HandValue make_value(HandCategory category, std::uint32_t ranks) {
  return HandValue{static_cast<std::uint32_t>(category) << 24 | ranks};
}

#ifndef NDEBUG
bool valid_distinct(const Card* cards, int count) {
  std::uint64_t seen = 0;
  for (int i = 0; i < count; ++i) {
    if (cards[i] >= kCards || (seen >> cards[i] & 1)) return false;
    seen |= std::uint64_t{1} << cards[i];
  }
  return true;
}
#endif

constexpr const char* kRankSingular[kRanks] = {"two",  "three", "four", "five",  "six",  "seven", "eight",
                                               "nine", "ten",   "jack", "queen", "king", "ace"};
constexpr const char* kRankPlural[kRanks] = {"twos",  "threes", "fours", "fives",  "sixes", "sevens", "eights",
                                             "nines", "tens",   "jacks", "queens", "kings", "aces"};

// The rank in the nibble `index` places below the top one (0 = bits 16..19).
int rank_at(HandValue value, int index) { return static_cast<int>(value.value >> (16 - 4 * index) & 0xF); }
std::string singular(HandValue value, int index) { return rank_name(rank_at(value, index)); }
std::string plural(HandValue value, int index) { return rank_name_plural(rank_at(value, index)); }

}  // namespace

// "?" also for a nibble no evaluated hand holds (a value built by hand).
const char* rank_name(int rank) { return rank >= 0 && rank < kRanks ? kRankSingular[rank] : "?"; }
const char* rank_name_plural(int rank) { return rank >= 0 && rank < kRanks ? kRankPlural[rank] : "?"; }

int best_straight_high(unsigned rank_mask) {
  const int high = rank_tables().straight_high[rank_mask & (kMasks - 1)];
  return high > 0 ? high : -1;  // no straight is deuce high: 0 marks none
}

const char* category_name(HandCategory category) {
  switch (category) {
    case HandCategory::kHighCard: return "high card";
    case HandCategory::kOnePair: return "one pair";
    case HandCategory::kTwoPair: return "two pair";
    case HandCategory::kThreeOfAKind: return "three of a kind";
    case HandCategory::kStraight: return "straight";
    case HandCategory::kFlush: return "flush";
    case HandCategory::kFullHouse: return "full house";
    case HandCategory::kFourOfAKind: return "four of a kind";
    case HandCategory::kStraightFlush: return "straight flush";
  }
  return "unknown";
}

HandValue evaluate(const Card* cards, int count) {
  assert(count >= 5 && count <= 7 && valid_distinct(cards, count));
  const RankTables& t = rank_tables();
  // Spelled out rather than a loop: five independent loads, and no vectorized
  // loop for counts that never occur.
  std::uint64_t hand = kCardWords[cards[0]] + kCardWords[cards[1]] + kCardWords[cards[2]] + kCardWords[cards[3]] +
                       kCardWords[cards[4]];
  if (count > 5) hand += kCardWords[cards[5]];
  if (count > 6) hand += kCardWords[cards[6]];
  const auto top = [&t](unsigned mask) { return t.top_five[mask] >> 16; };

  // A suit with five or more cards: its count + 3 reaches 8. No suit holds
  // more than seven, so the sum stays inside its lane.
  const std::uint64_t suit_counts = hand >> kCountShift & 7 * kEveryLane;
  if (const std::uint64_t flush_lanes = (suit_counts + 3 * kEveryLane) & 8 * kEveryLane) {
    int suit = 0;
    while ((flush_lanes >> (kLaneBits * suit) & 8) == 0) ++suit;
    const unsigned flush = suit_ranks(hand, suit);
    if (const unsigned high = t.straight_high[flush]) return make_value(HandCategory::kStraightFlush, high << 16);
    return make_value(HandCategory::kFlush, t.top_five[flush]);
  }
  const unsigned clubs = suit_ranks(hand, 0), diamonds = suit_ranks(hand, 1);
  const unsigned hearts = suit_ranks(hand, 2), spades = suit_ranks(hand, 3);
  // Ranks held in at least one, two, three and all four suits.
  const unsigned ranks = clubs | diamonds | hearts | spades;
  const unsigned pairs = (clubs & diamonds) | (hearts & spades) | ((clubs | diamonds) & (hearts | spades));
  const unsigned trips = (clubs & diamonds & (hearts | spades)) | (hearts & spades & (clubs | diamonds));
  const unsigned quads = clubs & diamonds & hearts & spades;

  if (quads) {
    const unsigned quad = top(quads);
    return make_value(HandCategory::kFourOfAKind, quad << 16 | top(ranks & ~(1u << quad)) << 12);
  }
  const unsigned trip = top(trips);  // meaningful only when trips != 0
  // With seven cards a second set of trips plays as the pair.
  const unsigned pairs_beside_trip = pairs & ~(1u << trip);
  if (trips && pairs_beside_trip) {
    return make_value(HandCategory::kFullHouse, trip << 16 | top(pairs_beside_trip) << 12);
  }
  if (const unsigned high = t.straight_high[ranks]) return make_value(HandCategory::kStraight, high << 16);
  if (trips) {
    const unsigned kickers = t.top_five[ranks & ~(1u << trip)] >> 4 & 0xFF00u;
    return make_value(HandCategory::kThreeOfAKind, trip << 16 | kickers);
  }
  // High card, one pair and two pair are the common hands and hard to tell
  // apart in advance, so all three are computed and one picked.
  const unsigned high_pair = top(pairs);
  const unsigned other_pairs = pairs & ~(1u << high_pair);
  const unsigned low_pair = top(other_pairs);
  const HandValue two_pair =
      make_value(HandCategory::kTwoPair, high_pair << 16 | low_pair << 12 |
                                             top(ranks & ~(1u << high_pair | 1u << low_pair)) << 8);
  const HandValue one_pair =
      make_value(HandCategory::kOnePair, high_pair << 16 | (t.top_five[ranks & ~(1u << high_pair)] >> 4 & 0xFFF0u));
  const HandValue high_card = make_value(HandCategory::kHighCard, t.top_five[ranks]);
  return other_pairs ? two_pair : pairs ? one_pair : high_card;
}

std::string describe(HandValue value) {
  const std::string name = category_name(value.category());
  switch (value.category()) {
    case HandCategory::kHighCard:
    case HandCategory::kStraight:
    case HandCategory::kFlush: return name + ", " + singular(value, 0) + " high";
    case HandCategory::kOnePair:
    case HandCategory::kThreeOfAKind:
    case HandCategory::kFourOfAKind: return name + ", " + plural(value, 0);
    case HandCategory::kTwoPair: return name + ", " + plural(value, 0) + " and " + plural(value, 1);
    case HandCategory::kFullHouse: return name + ", " + plural(value, 0) + " full of " + plural(value, 1);
    case HandCategory::kStraightFlush:
      return rank_at(value, 0) == kAce ? "royal flush" : name + ", " + singular(value, 0) + " high";
  }
  return name;
}

}  // namespace kvframe::examples::holdem
