// The raises a seat is offered (raise_sizes.h): the amounts of each size in
// the situations that define them. That every menu is legal and every raise
// of the tight-aggressive bot is on it, over thousands of decisions, is
// checked where the rule bots play (holdem_players_test.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "holdem/raise_sizes.h"

namespace kvframe::examples::holdem {
namespace {

constexpr std::int64_t kStack = 1000;  // 100 big blinds at 5/10

Hand six_handed(std::uint64_t seed, std::vector<std::int64_t> stacks = std::vector<std::int64_t>(6, kStack)) {
  DeterministicRng rng(seed);
  return Hand(TableConfig{}, 0, stacks, Deck(rng));
}

std::vector<std::int64_t> amounts_of(const Hand& hand) { return raise_amounts(raise_menu(hand)); }

TEST(HoldemRaiseSizes, PreflopOffersTheOpenThePotAndAllIn) {
  Hand hand = six_handed(1);  // button 0: blinds 5 and 10 from seats 1 and 2, seat 3 to act
  // Open: 3 big blinds. Pot: call 10, then add the 25 in the pot: to 35.
  EXPECT_EQ(amounts_of(hand), (std::vector<std::int64_t>{30, 35, 1000}));
  EXPECT_EQ(raise_menu(hand).front().label, "open");
  EXPECT_EQ(raise_menu(hand).back().label, "all in");
  hand.apply(Action::call());  // a limper: the open grows by a big blind
  EXPECT_EQ(raise_to(hand, RaiseSize::kOpen), 40);
  hand.apply(Action::raise_to(40));
  EXPECT_EQ(raise_to(hand, RaiseSize::kOpen), 120);  // a re-raise: three times the bet
  EXPECT_EQ(raise_menu(hand).front().label, "three times the bet");
}

TEST(HoldemRaiseSizes, PostflopOffersSharesOfThePotAfterTheCall) {
  Hand hand = six_handed(2);
  while (hand.street() == Street::kPreflop) hand.apply(hand.legal().can_check ? Action::check() : Action::call());
  ASSERT_EQ(hand.pot(), 60);  // six callers of 10, checked to the first seat after the flop
  EXPECT_EQ(amounts_of(hand), (std::vector<std::int64_t>{30, 40, 60, 990}));  // 10 of each stack is in
  hand.apply(Action::raise_to(40));
  // Facing 40 into 100: the call makes 140; half of it on top of the bet is 110.
  EXPECT_EQ(amounts_of(hand), (std::vector<std::int64_t>{110, 133, 180, 990}));
  EXPECT_EQ(raise_menu(hand)[1].label, "two thirds pot");
}

TEST(HoldemRaiseSizes, ShortStacksShareTheAllIn) {
  Hand hand = six_handed(3, {kStack, kStack, kStack, 32, kStack, kStack});
  const std::vector<RaiseOption> menu = raise_menu(hand);
  ASSERT_EQ(menu.size(), 2u);  // the pot raise (35) reaches the whole 32 chips
  EXPECT_EQ(menu[0].to, 30);
  EXPECT_EQ(menu[1].to, 32);
  EXPECT_EQ(menu[1].label, "all in");
}

}  // namespace
}  // namespace kvframe::examples::holdem
