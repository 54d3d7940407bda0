// Cards, the hand evaluator and Monte Carlo equity (examples/holdem).
//
// The evaluator is checked against the published category counts over every
// 5-card hand (2,598,960) and every 7-card hand (133,784,560: a few seconds
// in Release, half a minute in a Debug build), against the number of
// distinct hand values (7,462 and 4,824 equivalence classes), and against a
// brute-force best-of-the-five-card-subsets on random 6- and 7-card hands.
#include <gtest/gtest.h>

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/deterministic_rng.h"
#include "holdem/cards.h"
#include "holdem/equity.h"
#include "holdem/hand_eval.h"

namespace kvframe::examples::holdem {
namespace {

using Counts = std::array<std::uint64_t, kHandCategories>;

// "Ah Kd 9c" as cards; a name that does not parse fails the test.
std::vector<Card> cards(const std::string& text) {
  std::vector<Card> out;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const std::optional<Card> card = parse_card(word);
    if (!card) ADD_FAILURE() << "bad card in test: " << word;
    out.push_back(card.value_or(0));
  }
  return out;
}

HandValue eval(const std::string& text) {
  const std::vector<Card> hand = cards(text);
  return evaluate(hand.data(), static_cast<int>(hand.size()));
}

// The best value among all five-card subsets: the definition of a hand's
// value, spelled out the slow way.
HandValue best_five_card_subset(const std::vector<Card>& hand) {
  const int n = static_cast<int>(hand.size());
  HandValue best;
  std::array<Card, 5> five{};
  for (unsigned pick = 0; pick < (1u << n); ++pick) {
    if (std::bitset<7>(pick).count() != 5) continue;
    std::size_t filled = 0;
    for (int i = 0; i < n; ++i) {
      if (pick >> i & 1) five[filled++] = hand[static_cast<std::size_t>(i)];
    }
    const HandValue value = evaluate5(five.data());
    if (value > best) best = value;
  }
  return best;
}

// `count` distinct random cards.
std::vector<Card> random_hand(DeterministicRng& rng, int count) {
  std::array<Card, kCards> deck{};
  for (int card = 0; card < kCards; ++card) deck[static_cast<std::size_t>(card)] = static_cast<Card>(card);
  std::vector<Card> hand;
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
    std::swap(deck[i], deck[i + rng.below(kCards - i)]);
    hand.push_back(deck[i]);
  }
  return hand;
}

// Which hand values occurred. A value's bits 20..23 are always zero, so
// category and ranks squeeze into 9 * 2^20 slots.
class ValueSet {
 public:
  void add(HandValue value) {
    const std::uint32_t slot = (value.value >> 24) << 20 | (value.value & 0xFFFFFu);
    if (!seen_[slot]) {
      seen_[slot] = true;
      ++size_;
    }
  }
  std::size_t size() const { return size_; }

 private:
  std::vector<bool> seen_ = std::vector<bool>(std::size_t{kHandCategories} << 20);
  std::size_t size_ = 0;
};

std::size_t index_of(HandCategory category) { return static_cast<std::size_t>(category); }

// ---------------------------------------------------------------- cards

TEST(HoldemCards, NameAndParseRoundTripAllCards) {
  std::set<std::string> names;
  for (int i = 0; i < kCards; ++i) {
    const auto card = static_cast<Card>(i);
    const std::string name = card_name(card);
    ASSERT_EQ(name.size(), 2u);
    EXPECT_EQ(parse_card(name), card) << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 52u);
  EXPECT_EQ(card_name(make_card(12, 2)), "Ah");
  EXPECT_EQ(card_name(make_card(8, 0)), "Tc");
  EXPECT_EQ(card_name(make_card(0, 1)), "2d");
  EXPECT_EQ(card_name(make_card(11, 3)), "Ks");
  EXPECT_EQ(parse_card("ah"), make_card(12, 2));  // the rank letter's case is ignored
  EXPECT_EQ(parse_card("tc"), make_card(8, 0));
  EXPECT_EQ(card_names(cards("Ah 7c")), (std::vector<std::string>{"Ah", "7c"}));
}

TEST(HoldemCards, ParseRejectsBadText) {
  for (const char* text : {"1h", "Ax", "", "Ahh", "A", "10h", "AH", " A", "hA"}) {
    EXPECT_FALSE(parse_card(text).has_value()) << '"' << text << '"';
  }
  EXPECT_EQ(card_name(kCards), "??");
}

TEST(HoldemCards, SeededDeckDealsTheSame52DistinctCardsTwice) {
  const auto deal_all = [](std::uint64_t seed) {
    DeterministicRng rng(seed);
    Deck deck(rng);
    std::vector<Card> dealt;
    while (deck.remaining() > 0) dealt.push_back(deck.deal());
    return dealt;
  };
  const std::vector<Card> first = deal_all(42);
  ASSERT_EQ(first.size(), 52u);
  EXPECT_EQ(std::set<Card>(first.begin(), first.end()).size(), 52u);
  EXPECT_EQ(deal_all(42), first);
  EXPECT_NE(deal_all(43), first);
}

TEST(HoldemCards, DeckInAGivenOrderDealsItAndThenThrows) {
  Deck deck(cards("Ah 2c Td"));
  EXPECT_EQ(deck.remaining(), 3u);
  EXPECT_EQ(card_name(deck.deal()), "Ah");
  EXPECT_EQ(card_name(deck.deal()), "2c");
  EXPECT_EQ(card_name(deck.deal()), "Td");
  EXPECT_EQ(deck.remaining(), 0u);
  EXPECT_THROW(deck.deal(), std::out_of_range);
  EXPECT_THROW(Deck(cards("Ah Ah")), std::invalid_argument);
  EXPECT_THROW(Deck(std::vector<Card>{52}), std::invalid_argument);
}

TEST(HoldemCards, DealOnAnEmptySeededDeckThrows) {
  DeterministicRng rng(1);
  Deck deck(rng);
  for (int i = 0; i < kCards; ++i) deck.deal();
  EXPECT_THROW(deck.deal(), std::out_of_range);
}

// ---------------------------------------------------------------- enumerations

TEST(HoldemEval, AllFiveCardHandsMatchPublishedCountsAnd7462Classes) {
  Counts counts{};
  std::uint64_t royals = 0;
  ValueSet values;
  const HandValue royal = eval("As Ks Qs Js Ts");
  for_each_hand<5>([&](const Card* hand) {
    const HandValue value = evaluate5(hand);
    ++counts[index_of(value.category())];
    royals += value == royal;
    values.add(value);
  });
  const Counts published = {1'302'540, 1'098'240, 123'552, 54'912, 10'200, 5'108, 3'744, 624, 40};
  EXPECT_EQ(counts, published);
  EXPECT_EQ(royals, 4u);
  EXPECT_EQ(values.size(), 7'462u);
}

// Every 7-card hand: 2-4 s in Release on a shared 2-core machine, about 30 s
// in a Debug build (leave it out with --gtest_filter=-*AllSevenCardHands*).
TEST(HoldemEval, AllSevenCardHandsMatchPublishedCountsAnd4824Classes) {
  Counts counts{};
  std::uint64_t royals = 0;
  ValueSet values;
  const HandValue royal = eval("Ah Kh Qh Jh Th");
  for_each_hand<7>([&](const Card* hand) {
    const HandValue value = evaluate7(hand);
    ++counts[index_of(value.category())];
    royals += value == royal;
    values.add(value);
  });
  const Counts published = {23'294'460, 58'627'800, 31'433'400, 6'461'620, 6'180'020,
                            4'047'644,  3'473'184,  224'848,    41'584};
  EXPECT_EQ(counts, published);
  EXPECT_EQ(royals, 4'324u);
  EXPECT_EQ(values.size(), 4'824u);
}

TEST(HoldemEval, SixAndSevenCardsEqualTheBestFiveCardSubset) {
  DeterministicRng rng(2024);
  for (int count : {6, 7}) {
    for (int i = 0; i < 200'000; ++i) {
      const std::vector<Card> hand = random_hand(rng, count);
      ASSERT_EQ(evaluate(hand.data(), count), best_five_card_subset(hand)) << testing::PrintToString(card_names(hand));
    }
  }
}

TEST(HoldemEval, CardOrderDoesNotMatter) {
  DeterministicRng rng(7);
  for (int i = 0; i < 100'000; ++i) {
    const int count = 5 + static_cast<int>(rng.below(3));
    std::vector<Card> hand = random_hand(rng, count);
    const HandValue value = evaluate(hand.data(), count);
    rng.shuffle(hand);
    ASSERT_EQ(evaluate(hand.data(), count), value) << testing::PrintToString(card_names(hand));
  }
}

// ---------------------------------------------------------------- orderings

TEST(HoldemEval, WheelIsTheLowestStraight) {
  const HandValue wheel = eval("Ah 2c 3d 4s 5h");
  EXPECT_EQ(wheel.category(), HandCategory::kStraight);
  EXPECT_LT(wheel, eval("2c 3d 4s 5h 6c"));
  EXPECT_GT(wheel, eval("Ac Ad Ah Kc Qd"));  // above any three of a kind
  EXPECT_EQ(eval("Ah Kh Qd Jc Tc").category(), HandCategory::kStraight);
  EXPECT_EQ(eval("Kh Ah 2d 3c 4c").category(), HandCategory::kHighCard);  // no wrap-around
}

TEST(HoldemEval, HigherFlushWinsAndSuitsNeverBreakTies) {
  EXPECT_GT(eval("Ah Jh 9h 5h 2h"), eval("Kd Qd Jd 9d 7d"));
  EXPECT_GT(eval("Ah Jh 9h 5h 3h"), eval("As Js 9s 5s 2s"));  // the last card decides
  EXPECT_EQ(eval("Ah Jh 9h 5h 2h"), eval("Ac Jc 9c 5c 2c"));
  EXPECT_EQ(eval("Ah Kd 9c 7s 4h"), eval("As Kc 9d 7h 4s"));
}

TEST(HoldemEval, KickersDecideOnePairTwoPairAndTrips) {
  EXPECT_GT(eval("9c 9d Ah 7s 4c"), eval("9h 9s Kh 7d 4d"));
  EXPECT_GT(eval("9c 9d Ah 7s 4c"), eval("9h 9s Ad 7d 3d"));  // the third kicker
  EXPECT_GT(eval("Tc Td 2h 3s 4c"), eval("9h 9s Ad Kd Qd"));  // the pair first
  EXPECT_GT(eval("Kc Kd 9h 9s Ac"), eval("Kh Ks 9c 9d Qc"));
  EXPECT_GT(eval("Kc Kd 9h 9s 2c"), eval("Kh Ks 8c 8d Ac"));  // the second pair first
  EXPECT_GT(eval("7c 7d 7h As 2c"), eval("7c 7d 7h Ks Qc"));
}

TEST(HoldemEval, FullHouseRanksTheTripsFirst) {
  EXPECT_GT(eval("6c 6d 6h 2c 2d"), eval("5c 5d 5h Ac As"));
  EXPECT_GT(eval("Qh Qs Qd 5h 5s"), eval("Qc Qs Qd 4h 4s"));
  EXPECT_GT(eval("2c 2d 2h 3c 3d"), eval("Ac Ad Ah Kc Qd 9s 8s"));  // above any flush-less trips
  // Two sets of trips in seven cards: the higher plays as trips, the lower as the pair.
  EXPECT_EQ(eval("Kc Kd Kh 9c 9d 9h 2s"), eval("Ks Kd Kh 9s 9d"));
  // Trips and two pairs: the higher pair completes the full house.
  EXPECT_EQ(eval("4c 4d 4h Qc Qd 8c 8d"), eval("4c 4d 4h Qc Qd"));
}

TEST(HoldemEval, SevenCardHandsPickTheirBestFive) {
  EXPECT_EQ(eval("Ah Kh 9h 5h 2h 3c 4d").category(), HandCategory::kFlush);  // over the wheel
  EXPECT_EQ(eval("Ac Ad Kc Kd Qc Qd 2s"), eval("Ah As Kh Ks Qh 3c 2d"));   // third pair as kicker
  EXPECT_EQ(eval("Ac Ad Ah As Kc Kd Ks"), eval("Ac Ad Ah As Kh"));          // quads, kicker only
  EXPECT_EQ(eval("5h 6h 7h 8h 9h Tc").category(), HandCategory::kStraightFlush);
  EXPECT_EQ(describe(eval("5h 6h 7h 8h 9h Tc Jc")), "straight flush, nine high");  // not the jack straight
}

TEST(HoldemEval, BoardPlaysIsASplit) {
  const std::string board = "Ac Kd Qh Js Tc ";
  EXPECT_EQ(eval(board + "2c 3d"), eval(board + "4h 5s"));
  EXPECT_EQ(eval(board + "2c 3d").category(), HandCategory::kStraight);
}

TEST(HoldemEval, SteelWheelIsTheLowestStraightFlush) {
  const HandValue steel_wheel = eval("Ah 2h 3h 4h 5h");
  EXPECT_EQ(steel_wheel.category(), HandCategory::kStraightFlush);
  EXPECT_LT(steel_wheel, eval("2h 3h 4h 5h 6h"));
  EXPECT_GT(steel_wheel, eval("Ac Ad Ah As Kc"));
  EXPECT_EQ(describe(steel_wheel), "straight flush, five high");
}

TEST(HoldemEval, DescribeNamesTheHand) {
  EXPECT_EQ(describe(eval("Ah Jd 9c 5s 2h")), "high card, ace high");
  EXPECT_EQ(describe(eval("9h 9d Kc 5s 2h")), "one pair, nines");
  EXPECT_EQ(describe(eval("Kh Kd 9c 9s 2h")), "two pair, kings and nines");
  EXPECT_EQ(describe(eval("4h 4d 4c 9s 2h")), "three of a kind, fours");
  EXPECT_EQ(describe(eval("6h 7d 8c 9s Th")), "straight, ten high");
  EXPECT_EQ(describe(eval("Ah Jh 9h 5h 2h")), "flush, ace high");
  EXPECT_EQ(describe(eval("Qh Qd Qc 4s 4h")), "full house, queens full of fours");
  EXPECT_EQ(describe(eval("Ah Ad Ac As 2h")), "four of a kind, aces");
  EXPECT_EQ(describe(eval("5s 6s 7s 8s 9s")), "straight flush, nine high");
  EXPECT_EQ(describe(eval("Ts Js Qs Ks As")), "royal flush");
  EXPECT_EQ(describe(eval("6h 6d Kc 5s 2h")), "one pair, sixes");
  EXPECT_EQ(describe(eval("Ah 2d 3c 4s 5h")), "straight, five high");
}

TEST(HoldemEval, CategoryNames) {
  const std::vector<std::string> expected = {"high card", "one pair",   "two pair",       "three of a kind", "straight",
                                             "flush",     "full house", "four of a kind", "straight flush"};
  for (int i = 0; i < kHandCategories; ++i) {
    EXPECT_EQ(category_name(static_cast<HandCategory>(i)), expected[static_cast<std::size_t>(i)]);
  }
}

// ---------------------------------------------------------------- equity

std::array<Card, 2> hole(const std::string& text) {
  const std::vector<Card> two = cards(text);
  return {two.at(0), two.at(1)};
}

double equity_of(const std::string& hand, const std::string& board, int opponents, int trials,
                 std::uint64_t seed = 1, const std::string& dead = "") {
  DeterministicRng rng(seed);
  return equity(hole(hand), cards(board), EquityParams{opponents, trials}, rng, cards(dead));
}

TEST(HoldemEquity, PreflopMatchesKnownOdds) {
  // Published heads-up preflop equities against a random hand: AA 85.2%, 72o 34.6%.
  EXPECT_NEAR(equity_of("Ah As", "", 1, 20'000), 0.852, 0.02);
  EXPECT_NEAR(equity_of("7h 2c", "", 1, 20'000), 0.346, 0.03);
  // More opponents, less equity.
  EXPECT_LT(equity_of("Ah As", "", 4, 5'000), 0.65);
}

TEST(HoldemEquity, MadeRoyalFlushOnTheRiverWinsEverything) {
  EXPECT_EQ(equity_of("Ah Kh", "Qh Jh Th 2c 3d", 1, 2'000), 1.0);
  EXPECT_EQ(equity_of("Ah Kh", "Qh Jh Th 2c 3d", 8, 500), 1.0);
}

TEST(HoldemEquity, BoardThatPlaysSplitsAmongEveryone) {
  EXPECT_EQ(equity_of("2c 3d", "As Ks Qs Js Ts", 1, 500), 0.5);
  EXPECT_EQ(equity_of("2c 3d", "As Ks Qs Js Ts", 3, 500), 0.25);
}

TEST(HoldemEquity, DeadCardsAreNeverDealt) {
  // Every card but Qc Qd dead: the one opponent holds queens, a set that beats ace-king.
  std::string dead;
  for (int i = 0; i < kCards; ++i) {
    const std::string name = card_name(static_cast<Card>(i));
    if (std::string("Ah Kh 2c 3d 7s 9h Qs Qc Qd").find(name) == std::string::npos) dead += name + " ";
  }
  EXPECT_EQ(equity_of("Ah Kh", "2c 3d 7s 9h Qs", 1, 300, 1, dead), 0.0);
}

TEST(HoldemEquity, SameSeedSameEquity) {
  EXPECT_EQ(equity_of("Jc Td", "9c 8c 2h", 3, 2'000, 99), equity_of("Jc Td", "9c 8c 2h", 3, 2'000, 99));
  EXPECT_NE(equity_of("Jc Td", "9c 8c 2h", 3, 2'000, 99), equity_of("Jc Td", "9c 8c 2h", 3, 2'000, 100));
}

TEST(HoldemEquity, RejectsInvalidInput) {
  EXPECT_THROW(equity_of("Ah Ah", "", 1, 100), std::invalid_argument);             // duplicate hole
  EXPECT_THROW(equity_of("Ah Kh", "Ah 2c 3d", 1, 100), std::invalid_argument);     // hole card on the board
  EXPECT_THROW(equity_of("Ah Kh", "2c 3d 4s", 1, 100, 1, "4s"), std::invalid_argument);  // dead on board
  EXPECT_THROW(equity_of("Ah Kh", "2c", 1, 100), std::invalid_argument);           // board size
  EXPECT_THROW(equity_of("Ah Kh", "2c 3d", 1, 100), std::invalid_argument);
  EXPECT_THROW(equity_of("Ah Kh", "2c 3d 4s 5s 6s 7s", 1, 100), std::invalid_argument);
  EXPECT_THROW(equity_of("Ah Kh", "", 0, 100), std::invalid_argument);             // opponents
  EXPECT_THROW(equity_of("Ah Kh", "", 9, 100), std::invalid_argument);
  EXPECT_THROW(equity_of("Ah Kh", "", 1, 0), std::invalid_argument);               // trials
  DeterministicRng rng(1);
  EXPECT_THROW(equity(std::array<Card, 2>{52, 0}, {}, EquityParams{}, rng), std::invalid_argument);
}

}  // namespace
}  // namespace kvframe::examples::holdem
