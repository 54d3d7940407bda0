// The raises a seat is offered (raise_sizes.h): the amounts of each size in
// the situations that define them, a menu that is always legal, sorted and
// ends all in, and the tight-aggressive bot raising only offered amounts, so
// the LLM bot, held to the menu, can always make the raise its target makes.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "holdem/players.h"
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

// In thousands of decisions (2..9 seats, short and deep stacks): every menu
// legal, sorted, distinct and ending all in; every tag raise on it.
TEST(HoldemRaiseSizes, TheTightAggressiveBotRaisesOnlyOfferedAmounts) {
  DeterministicRng table_rng(77);
  int menus = 0, tag_raises = 0;
  for (int seats = 2; seats <= 9; ++seats) {
    TableConfig config;
    config.seats = seats;
    MatchMemory memory(default_players(seats), 0);
    std::vector<std::unique_ptr<Player>> bots;
    for (int i = 0; i < seats; ++i) {
      bots.push_back(i % 2 == 0 ? std::make_unique<TightAggressive>(table_rng.below(1u << 30), TightAggressive::Params{100})
                                : make_rule_player(i % 4 == 1 ? "random" : "station", table_rng.below(1u << 30)));
    }
    for (int n = 1; n <= 60; ++n) {
      std::vector<std::int64_t> stacks(static_cast<std::size_t>(seats), kStack);
      for (auto& stack : stacks) stack = n % 2 ? table_rng.between(15, 3000) : kStack;
      Hand hand(config, n % seats, stacks, Deck(table_rng));
      while (!hand.over()) {
        const int seat = hand.to_act();
        const LegalActions legal = hand.legal();
        const std::vector<std::int64_t> offered = amounts_of(hand);
        if (legal.can_raise) {
          ++menus;
          ASSERT_FALSE(offered.empty());
          EXPECT_TRUE(std::is_sorted(offered.begin(), offered.end()));
          EXPECT_EQ(std::adjacent_find(offered.begin(), offered.end()), offered.end());
          EXPECT_GE(offered.front(), legal.min_raise_to);
          EXPECT_EQ(offered.back(), legal.max_raise_to);
          EXPECT_EQ(raise_menu(hand).back().label, "all in");
        } else {
          EXPECT_TRUE(offered.empty());
        }
        const Action action =
            bots[static_cast<std::size_t>(seat)]->decide({hand, seat, memory, static_cast<std::uint64_t>(n)}).action;
        if (seat % 2 == 0 && action.kind == ActionKind::kRaise) {
          ++tag_raises;
          EXPECT_NE(std::find(offered.begin(), offered.end(), action.amount), offered.end())
              << "tag raised to " << action.amount << " at " << seats << " seats, hand " << n;
        }
        hand.apply(action);
      }
    }
  }
  EXPECT_GT(menus, 1000);
  EXPECT_GT(tag_raises, 200);
}

}  // namespace
}  // namespace kvframe::examples::holdem
