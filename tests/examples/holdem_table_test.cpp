// The Hold'em rules engine (examples/holdem/table.h): blinds and action
// order, raise sizes, incomplete all-ins, side pots, split pots, run-outs,
// illegal actions, and a property test over random hands.
//
// Decks are stacked with the engine's deal order: hole cards one at a time
// starting left of the button, twice round, then the board; no burn cards.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/deterministic_rng.h"
#include "holdem/cards.h"
#include "holdem/table.h"

namespace kvframe::examples::holdem {
namespace {

using Stacks = std::vector<std::int64_t>;
using Names = std::vector<std::string>;

TableConfig table(int seats) {
  TableConfig config;
  config.seats = seats;  // blinds 5/10
  return config;
}

Card card(const std::string& name) {
  const std::optional<Card> parsed = parse_card(name);
  EXPECT_TRUE(parsed.has_value()) << name;
  return parsed.value_or(0);
}

std::vector<Card> cards(const Names& names) {
  std::vector<Card> out;
  for (const std::string& name : names) out.push_back(card(name));
  return out;
}

// A deck dealing `first` first, then every other card in ascending order.
Deck deck_starting_with(const Names& first) {
  std::vector<Card> order = cards(first);
  for (int c = 0; c < kCards; ++c) {
    const auto next = static_cast<Card>(c);
    if (std::find(order.begin(), order.end(), next) == order.end()) order.push_back(next);
  }
  return Deck(order);
}

// A deck giving hole[seat] to each seat (an empty entry: the seat sits out)
// and then `board`, in the engine's deal order.
Deck stacked_deck(int button, const std::vector<Names>& hole, const Names& board) {
  const int seats = static_cast<int>(hole.size());
  Names order;
  for (std::size_t round = 0; round < 2; ++round) {
    for (int step = 1; step <= seats; ++step) {
      const Names& mine = hole[static_cast<std::size_t>((button + step) % seats)];
      if (!mine.empty()) order.push_back(mine[round]);
    }
  }
  order.insert(order.end(), board.begin(), board.end());
  return deck_starting_with(order);
}

Deck shuffled_deck(std::uint64_t seed) {
  DeterministicRng rng(seed);
  return Deck(rng);
}

// Plays `action` after checking that `seat` is the one to act.
void act(Hand& hand, int seat, const Action& action) {
  ASSERT_EQ(hand.to_act(), seat) << action_name(action.kind);
  hand.apply(action);
}

void check_down(Hand& hand) {
  while (!hand.over()) hand.apply(Action::check());
}

// Everything a player or a bot can observe, as text.
std::string snapshot(const Hand& hand) {
  std::ostringstream out;
  out << hand.to_act() << ' ' << street_name(hand.street()) << " bet " << hand.current_bet()
      << " pot " << hand.pot() << " log " << hand.log().size() << " board";
  for (const std::string& name : card_names(hand.board())) out << ' ' << name;
  for (const SeatState& s : hand.seats()) {
    out << " | " << s.stack << ' ' << s.bet << ' ' << s.committed << ' ' << s.in_hand << s.folded
        << s.all_in;
    for (const std::string& name : card_names(s.hole)) out << ' ' << name;
  }
  const LegalActions legal = hand.legal();
  out << " | legal " << legal.can_check << ' ' << legal.call_amount << ' ' << legal.can_raise << ' '
      << legal.min_raise_to << ' ' << legal.max_raise_to;
  for (const Pot& pot : hand.pots()) out << " pot " << pot.amount << '/' << pot.eligible.size();
  return out.str();
}

std::vector<int> seats_acting(Hand& hand, Street street) {
  std::vector<int> order;
  while (!hand.over() && hand.street() == street) {
    order.push_back(hand.to_act());
    hand.apply(hand.legal().can_check ? Action::check() : Action::call());
  }
  return order;
}

void expect_pot(const Pot& pot, std::int64_t amount, const std::vector<int>& eligible) {
  EXPECT_EQ(pot.amount, amount);
  EXPECT_EQ(pot.eligible, eligible);
}

void expect_award(const PotAward& award, std::int64_t amount, const std::vector<int>& winners) {
  EXPECT_EQ(award.amount, amount);
  EXPECT_EQ(award.winners, winners);
}

// --- deal, blinds, order ---------------------------------------------------

TEST(HoldemTable, DealsFromTheButtonsLeftTwiceRoundThenTheBoard) {
  Hand hand(table(3), /*button=*/1, {1000, 1000, 1000},
            deck_starting_with({"2c", "3c", "4c", "5c", "6c", "7c", "8d", "9d", "Td", "Jh", "Qh"}));
  EXPECT_EQ(hand.seats()[2].hole, cards({"2c", "5c"}));
  EXPECT_EQ(hand.seats()[0].hole, cards({"3c", "6c"}));
  EXPECT_EQ(hand.seats()[1].hole, cards({"4c", "7c"}));
  EXPECT_TRUE(hand.board().empty());
  seats_acting(hand, Street::kPreflop);
  EXPECT_EQ(hand.board(), cards({"8d", "9d", "Td"}));
  seats_acting(hand, Street::kFlop);
  EXPECT_EQ(hand.board(), cards({"8d", "9d", "Td", "Jh"}));
  seats_acting(hand, Street::kTurn);
  EXPECT_EQ(hand.board(), cards({"8d", "9d", "Td", "Jh", "Qh"}));
}

TEST(HoldemTable, HeadsUpTheButtonPostsTheSmallBlindAndActsFirstOnlyPreflop) {
  Hand hand(table(2), /*button=*/1, {1000, 1000}, shuffled_deck(1));
  EXPECT_EQ(hand.small_blind_seat(), 1);
  EXPECT_EQ(hand.big_blind_seat(), 0);
  ASSERT_EQ(hand.log().size(), 2u);
  EXPECT_EQ(hand.log()[0].seat, 1);
  EXPECT_EQ(hand.log()[0].kind, ActionKind::kSmallBlind);
  EXPECT_EQ(hand.log()[1].seat, 0);
  EXPECT_EQ(hand.log()[1].kind, ActionKind::kBigBlind);
  EXPECT_EQ(hand.pot(), 15);
  EXPECT_EQ(hand.current_bet(), 10);

  EXPECT_EQ(seats_acting(hand, Street::kPreflop), (std::vector<int>{1, 0}));  // BB's option
  EXPECT_EQ(seats_acting(hand, Street::kFlop), (std::vector<int>{0, 1}));
  EXPECT_EQ(seats_acting(hand, Street::kTurn), (std::vector<int>{0, 1}));
}

TEST(HoldemTable, ActionStartsLeftOfTheBigBlindThenLeftOfTheButton) {
  Hand hand(table(4), /*button=*/2, {1000, 1000, 1000, 1000}, shuffled_deck(2));
  EXPECT_EQ(hand.small_blind_seat(), 3);
  EXPECT_EQ(hand.big_blind_seat(), 0);
  EXPECT_EQ(seats_acting(hand, Street::kPreflop), (std::vector<int>{1, 2, 3, 0}));
  EXPECT_EQ(seats_acting(hand, Street::kFlop), (std::vector<int>{3, 0, 1, 2}));
}

TEST(HoldemTable, EmptySeatsSitOutAndTheButtonMayBeOne) {
  Hand dead_button(table(4), /*button=*/0, {0, 500, 500, 500},
                   stacked_deck(0, {{}, {"2c", "3c"}, {"4c", "5c"}, {"6c", "7c"}}, {}));
  EXPECT_FALSE(dead_button.seats()[0].in_hand);
  EXPECT_TRUE(dead_button.seats()[0].hole.empty());
  EXPECT_EQ(dead_button.seats()[1].hole, cards({"2c", "3c"}));
  EXPECT_EQ(dead_button.small_blind_seat(), 1);
  EXPECT_EQ(dead_button.big_blind_seat(), 2);
  EXPECT_EQ(seats_acting(dead_button, Street::kPreflop), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(seats_acting(dead_button, Street::kFlop), (std::vector<int>{1, 2, 3}));

  // Two left with the button empty: not heads-up blinds, the small blind acts first.
  Hand two_left(table(3), /*button=*/0, {0, 500, 500}, shuffled_deck(3));
  EXPECT_EQ(two_left.small_blind_seat(), 1);
  EXPECT_EQ(two_left.big_blind_seat(), 2);
  EXPECT_EQ(seats_acting(two_left, Street::kPreflop), (std::vector<int>{1, 2}));
  EXPECT_EQ(seats_acting(two_left, Street::kFlop), (std::vector<int>{1, 2}));

  Hand gap(table(4), /*button=*/0, {500, 0, 500, 500}, shuffled_deck(4));
  EXPECT_EQ(gap.small_blind_seat(), 2);
  EXPECT_EQ(gap.big_blind_seat(), 3);
  EXPECT_EQ(seats_acting(gap, Street::kPreflop), (std::vector<int>{0, 2, 3}));
}

TEST(HoldemTable, ShortBlindsPostAllInAndTheFullBigBlindIsStillCalled) {
  Hand hand(table(3), /*button=*/0, {1000, 3, 7}, shuffled_deck(5));
  ASSERT_EQ(hand.log().size(), 2u);
  EXPECT_EQ(hand.log()[0].added, 3);
  EXPECT_TRUE(hand.log()[0].all_in);
  EXPECT_EQ(hand.log()[1].added, 7);
  EXPECT_TRUE(hand.log()[1].all_in);
  EXPECT_EQ(hand.current_bet(), 10);

  ASSERT_EQ(hand.to_act(), 0);
  const LegalActions legal = hand.legal();
  EXPECT_EQ(legal.call_amount, 10);
  EXPECT_FALSE(legal.can_raise);  // nobody left to answer a raise
  hand.apply(Action::call());

  ASSERT_TRUE(hand.over());
  EXPECT_EQ(hand.board().size(), 5u);
  const HandResult& result = hand.result();
  EXPECT_TRUE(result.showdown);
  ASSERT_EQ(result.awards.size(), 2u);
  EXPECT_EQ(result.awards[0].amount, 9);  // 3 from each
  EXPECT_EQ(result.awards[1].amount, 8);  // 4 more from the button and the big blind
  EXPECT_GE(result.net[0], -7);           // the button's unmatched 3 came back
  EXPECT_EQ(std::accumulate(result.net.begin(), result.net.end(), std::int64_t{0}), 0);
}

TEST(HoldemTable, AShortButtonBlindHeadsUpEndsTheHandAtOnce) {
  Hand hand(table(2), /*button=*/0, {3, 1000},
            stacked_deck(0, {{"Ah", "Ad"}, {"8s", "4d"}}, {"2c", "7d", "9h", "Js", "3c"}));
  EXPECT_TRUE(hand.over());
  EXPECT_EQ(hand.to_act(), -1);
  EXPECT_EQ(hand.board().size(), 5u);
  const HandResult& result = hand.result();
  EXPECT_TRUE(result.showdown);
  ASSERT_EQ(result.awards.size(), 1u);
  EXPECT_EQ(result.awards[0].amount, 6);  // the big blind's other 7 go back
  EXPECT_EQ(result.net, (Stacks{3, -3}));
}

// --- raise sizes -----------------------------------------------------------

TEST(HoldemTable, AMinimumRaiseIsTheBetPlusTheLargestRaiseSoFar) {
  Hand hand(table(3), /*button=*/0, {1000, 1000, 1000}, shuffled_deck(7));
  EXPECT_EQ(hand.legal().min_raise_to, 20);
  EXPECT_EQ(hand.legal().max_raise_to, 1000);
  act(hand, 0, Action::raise_to(35));  // a raise of 25
  EXPECT_EQ(hand.legal().min_raise_to, 60);
  EXPECT_EQ(hand.legal().max_raise_to, 1000);  // bet 5 + stack 995
  act(hand, 1, Action::raise_to(100));         // a raise of 65
  EXPECT_EQ(hand.legal().min_raise_to, 165);
  EXPECT_EQ(hand.check(Action::raise_to(164)), "raise to 164 is below the minimum 165");
  act(hand, 2, Action::call());
  EXPECT_TRUE(hand.legal().can_raise);  // reopened by the full re-raise
  EXPECT_EQ(hand.legal().min_raise_to, 165);
  act(hand, 0, Action::call());

  // A new street: a bet of at least the big blind, then raises of at least the bet.
  ASSERT_EQ(hand.street(), Street::kFlop);
  EXPECT_EQ(hand.current_bet(), 0);
  EXPECT_EQ(hand.legal().min_raise_to, 10);
  EXPECT_EQ(hand.check(Action::raise_to(9)), "raise to 9 is below the minimum 10");
  act(hand, 1, Action::raise_to(10));
  EXPECT_EQ(hand.legal().min_raise_to, 20);
  act(hand, 2, Action::raise_to(50));  // a raise of 40
  EXPECT_EQ(hand.legal().min_raise_to, 90);
  EXPECT_EQ(hand.legal().max_raise_to, 900);  // bet 0 + stack 900
  EXPECT_EQ(hand.check(Action::raise_to(901)), "raise to 901 is more than the stack: at most 900");
  act(hand, 0, Action::raise_to(900));
  EXPECT_TRUE(hand.seats()[0].all_in);
}

TEST(HoldemTable, AnAllInBelowTheMinimumIsTheOnlyRaiseLeft) {
  Hand hand(table(3), /*button=*/0, {1000, 1000, 25}, shuffled_deck(8));
  act(hand, 0, Action::raise_to(20));
  act(hand, 1, Action::call());
  const LegalActions legal = hand.legal();  // the big blind: 15 behind
  ASSERT_TRUE(legal.can_raise);
  EXPECT_EQ(legal.min_raise_to, 25);
  EXPECT_EQ(legal.max_raise_to, 25);
  EXPECT_EQ(hand.check(Action::raise_to(24)), "raise to 24 is below the minimum 25");
  act(hand, 2, Action::raise_to(25));
  EXPECT_TRUE(hand.seats()[2].all_in);
  EXPECT_FALSE(hand.legal().can_raise);  // 5 more is not a full raise
  EXPECT_EQ(hand.legal().call_amount, 5);
}

// Flop, seats 1 (A) and 0 (C) deep, seat 2 (B) with 150 behind.
Hand flop_with_a_short_stack() {
  Hand hand(table(3), /*button=*/0, {1000, 1000, 160}, shuffled_deck(9));
  seats_acting(hand, Street::kPreflop);
  return hand;
}

TEST(HoldemTable, AnIncompleteAllInRaiseDoesNotReopenTheBetting) {
  Hand hand = flop_with_a_short_stack();
  act(hand, 1, Action::raise_to(100));
  EXPECT_EQ(hand.legal().min_raise_to, 150);  // short of 200: all in only
  act(hand, 2, Action::raise_to(150));
  LegalActions legal = hand.legal();  // C has not acted: may raise
  EXPECT_TRUE(legal.can_raise);
  EXPECT_EQ(legal.min_raise_to, 250);  // 150 + the largest raise, 100
  act(hand, 0, Action::call());
  legal = hand.legal();  // A already acted: call or fold only
  EXPECT_FALSE(legal.can_raise);
  EXPECT_EQ(legal.call_amount, 50);
  EXPECT_EQ(hand.check(Action::raise_to(250)),
            "cannot raise: all-ins below a full raise since this seat acted do not reopen the betting");
  EXPECT_EQ(hand.check(Action::fold()), "");
  act(hand, 1, Action::call());
  EXPECT_EQ(hand.street(), Street::kTurn);
}

TEST(HoldemTable, AFullRaiseAfterAnIncompleteOneReopensTheBetting) {
  Hand hand = flop_with_a_short_stack();
  act(hand, 1, Action::raise_to(100));
  act(hand, 2, Action::raise_to(150));
  act(hand, 0, Action::raise_to(250));
  const LegalActions legal = hand.legal();
  EXPECT_TRUE(legal.can_raise);
  EXPECT_EQ(legal.min_raise_to, 350);
}

TEST(HoldemTable, NoRaiseWhenEveryOtherSeatIsAllIn) {
  Hand hand(table(2), /*button=*/0, {300, 1000}, shuffled_deck(10));
  act(hand, 0, Action::raise_to(300));
  const LegalActions legal = hand.legal();
  EXPECT_FALSE(legal.can_raise);
  EXPECT_EQ(legal.call_amount, 290);
  EXPECT_EQ(hand.check(Action::raise_to(600)),
            "cannot raise: every other seat is all in, folded, or cannot cover the bet");
}

// Flop, button 0 (preflop everyone calls 10): seat 1 bets 100, then seats 2
// and 3 go all in short of a full raise each; seat 0 calls.
Hand flop_with_two_short_all_ins(std::int64_t seat3_stack) {
  Hand hand(table(4), /*button=*/0, {1000, 1000, 160, seat3_stack}, shuffled_deck(11));
  seats_acting(hand, Street::kPreflop);
  act(hand, 1, Action::raise_to(100));
  act(hand, 2, Action::raise_to(150));  // all in: +50
  act(hand, 3, Action::raise_to(seat3_stack - 10));  // all in
  act(hand, 0, Action::call());
  return hand;
}

// TDA Rule 47 (Re-Opening the Bet), as Robert's Rules of Poker section 14:
// all-ins short of a full raise, alone or several together, do not reopen the
// betting for a player who already acted; together reaching a full raise, they do.
// Seat 1 acted at 100; two short all-ins take it to 210: 110 more, at least
// the full raise of 100, so seat 1 may raise again.
TEST(HoldemTable, ShortAllInsThatTogetherMakeAFullRaiseReopenTheBetting) {
  Hand hand = flop_with_two_short_all_ins(/*seat3_stack=*/220);
  ASSERT_EQ(hand.to_act(), 1);
  const LegalActions legal = hand.legal();
  EXPECT_TRUE(legal.can_raise);
  EXPECT_EQ(legal.call_amount, 110);
  EXPECT_EQ(legal.min_raise_to, 310);  // 210 + the largest full raise, 100
  act(hand, 1, Action::raise_to(310));
  EXPECT_EQ(hand.to_act(), 0);
}

// The same with the two all-ins adding 90 in all: short of a full raise, so
// seat 1 may only call or fold.
TEST(HoldemTable, ShortAllInsThatTogetherFallShortDoNotReopenTheBetting) {
  Hand hand = flop_with_two_short_all_ins(/*seat3_stack=*/200);
  ASSERT_EQ(hand.to_act(), 1);
  const LegalActions legal = hand.legal();
  EXPECT_FALSE(legal.can_raise);
  EXPECT_EQ(legal.call_amount, 90);
  act(hand, 1, Action::call());
  EXPECT_EQ(hand.street(), Street::kTurn);
}

// table.h: no raise nobody could answer. Seat 0 is all in for 200 and seat 2
// has only 100 in all: a raise by seat 1 could not be called by anyone.
TEST(HoldemTable, NoRaiseWhenNoOtherSeatCanCoverTheBet) {
  Hand hand(table(3), /*button=*/0, {200, 1000, 100}, shuffled_deck(12));
  act(hand, 0, Action::raise_to(200));
  ASSERT_EQ(hand.to_act(), 1);
  const LegalActions legal = hand.legal();
  EXPECT_FALSE(legal.can_raise);
  EXPECT_EQ(legal.call_amount, 195);
  EXPECT_EQ(hand.check(Action::raise_to(400)),
            "cannot raise: every other seat is all in, folded, or cannot cover the bet");
}

// --- pots ------------------------------------------------------------------

TEST(HoldemTable, AShortAllInCallMakesASidePot) {
  // Seat 1 wins the main pot, seat 0 the side pot.
  Hand hand(table(3), /*button=*/0, {1000, 80, 1000},
            stacked_deck(0, {{"Kh", "Kd"}, {"Ah", "Ad"}, {"8s", "4d"}},
                         {"2c", "7d", "9h", "Js", "3c"}));
  act(hand, 0, Action::raise_to(200));
  act(hand, 1, Action::call());
  EXPECT_EQ(hand.log().back().added, 75);
  EXPECT_EQ(hand.log().back().bet_to, 80);
  EXPECT_TRUE(hand.log().back().all_in);
  act(hand, 2, Action::call());
  std::vector<Pot> pots = hand.pots();
  ASSERT_EQ(pots.size(), 2u);
  expect_pot(pots[0], 240, {0, 1, 2});
  expect_pot(pots[1], 240, {0, 2});
  check_down(hand);

  const HandResult& result = hand.result();
  ASSERT_EQ(result.awards.size(), 2u);
  expect_award(result.awards[0], 240, {1});
  expect_award(result.awards[1], 240, {0});
  EXPECT_EQ(result.net, (Stacks{40, 160, -200}));
  EXPECT_EQ(hand.seats()[1].stack, 240);
}

TEST(HoldemTable, ThreeAllInsMakeAMainAndTwoSidePotsAndTheCoverGetsItsExcessBack) {
  // The shortest stack holds the best hand, the next the second best...
  Hand hand(table(4), /*button=*/0, {100, 200, 300, 1000},
            stacked_deck(0, {{"Ah", "Ad"}, {"Kh", "Kd"}, {"Qh", "Qd"}, {"8s", "4d"}},
                         {"2c", "7d", "9h", "Js", "3c"}));
  act(hand, 3, Action::raise_to(1000));
  act(hand, 0, Action::call());
  act(hand, 1, Action::call());
  act(hand, 2, Action::call());
  ASSERT_TRUE(hand.over());
  EXPECT_EQ(hand.board().size(), 5u);
  const std::vector<Pot> pots = hand.pots();
  ASSERT_EQ(pots.size(), 3u);
  expect_pot(pots[0], 400, {0, 1, 2, 3});
  expect_pot(pots[1], 300, {1, 2, 3});
  expect_pot(pots[2], 200, {2, 3});

  const HandResult& result = hand.result();
  EXPECT_TRUE(result.showdown);
  ASSERT_EQ(result.awards.size(), 3u);
  expect_award(result.awards[0], 400, {0});
  expect_award(result.awards[1], 300, {1});
  expect_award(result.awards[2], 200, {2});
  EXPECT_EQ(result.net, (Stacks{300, 100, -100, -300}));
  EXPECT_EQ(hand.seats()[3].stack, 700);  // 700 of its 1000 nobody could call
  for (const auto& shown : result.shown) EXPECT_TRUE(shown.has_value());
}

TEST(HoldemTable, FoldedChipsStayInThePotButTheFolderCannotWinIt) {
  Hand hand(table(4), /*button=*/0, {1000, 1000, 1000, 100},
            stacked_deck(0, {{"Kh", "Kd"}, {"Qh", "Qd"}, {"8s", "4d"}, {"Ah", "Ad"}},
                         {"2c", "7d", "9h", "Js", "3c"}));
  act(hand, 3, Action::raise_to(100));
  act(hand, 0, Action::call());
  act(hand, 1, Action::fold());
  std::vector<Pot> pots = hand.pots();
  ASSERT_EQ(pots.size(), 1u);
  expect_pot(pots[0], 215, {0, 2, 3});
  act(hand, 2, Action::raise_to(300));
  act(hand, 0, Action::fold());

  ASSERT_TRUE(hand.over());  // seat 2 alone could bet: the board ran out
  pots = hand.pots();
  ASSERT_EQ(pots.size(), 1u);
  expect_pot(pots[0], 305, {2, 3});
  const HandResult& result = hand.result();
  EXPECT_TRUE(result.showdown);
  ASSERT_EQ(result.awards.size(), 1u);
  expect_award(result.awards[0], 305, {3});
  EXPECT_EQ(result.net, (Stacks{-100, -5, -100, 205}));
  EXPECT_FALSE(result.shown[0].has_value());
  EXPECT_TRUE(result.shown[2].has_value());
}

// Seats b+3 and b call, b+1 folds its small blind, b+2 checks: 35 in the
// pot, and the board (a broadway straight) plays for the three left.
Hand board_plays(int button) {
  std::vector<Names> hole = {{"2d", "3h"}, {"4d", "5h"}, {"6d", "7h"}, {"8d", "9h"}};
  Hand hand(table(4), button, {1000, 1000, 1000, 1000},
            stacked_deck(button, hole, {"Ah", "Kd", "Qc", "Js", "Tc"}));
  act(hand, (button + 3) % 4, Action::call());
  act(hand, button, Action::call());
  act(hand, (button + 1) % 4, Action::fold());
  act(hand, (button + 2) % 4, Action::check());
  check_down(hand);
  return hand;
}

TEST(HoldemTable, ASplitPotsOddChipsGoClockwiseFromTheButton) {
  Hand hand = board_plays(/*button=*/0);
  HandResult result = hand.result();
  ASSERT_EQ(result.awards.size(), 1u);
  expect_award(result.awards[0], 35, {0, 2, 3});
  EXPECT_EQ(result.net, (Stacks{1, -5, 2, 2}));  // 11 each, the odd 2 to seats 2 and 3

  hand = board_plays(/*button=*/2);  // clockwise from the button: 3 (folded), 0, 1, 2
  result = hand.result();
  expect_award(result.awards[0], 35, {0, 1, 2});
  EXPECT_EQ(result.net, (Stacks{2, 2, 1, -5}));
}

TEST(HoldemTable, TwoOfThreeTieForTheSidePot) {
  Hand hand(table(3), /*button=*/0, {200, 50, 300},
            stacked_deck(0, {{"Kh", "8d"}, {"As", "Ad"}, {"Kd", "8h"}},
                         {"2c", "7d", "9h", "Js", "3c"}));
  act(hand, 0, Action::raise_to(200));
  act(hand, 1, Action::call());
  act(hand, 2, Action::call());
  ASSERT_TRUE(hand.over());
  const HandResult& result = hand.result();
  ASSERT_EQ(result.awards.size(), 2u);
  expect_award(result.awards[0], 150, {1});
  expect_award(result.awards[1], 300, {0, 2});
  EXPECT_EQ(result.net, (Stacks{-50, 100, -50}));
  EXPECT_EQ(*result.shown[0], *result.shown[2]);
}

// --- ends of a hand --------------------------------------------------------

TEST(HoldemTable, AnAllInPreflopRunsOutTheBoardWithoutMoreActions) {
  Hand hand(table(2), /*button=*/0, {500, 500}, shuffled_deck(11));
  EXPECT_THROW(hand.result(), std::logic_error);
  act(hand, 0, Action::raise_to(500));
  act(hand, 1, Action::call());
  ASSERT_TRUE(hand.over());
  EXPECT_EQ(hand.to_act(), -1);
  EXPECT_EQ(hand.board().size(), 5u);
  EXPECT_EQ(hand.street(), Street::kRiver);
  for (const ActionRecord& record : hand.log()) EXPECT_EQ(record.street, Street::kPreflop);
  EXPECT_TRUE(hand.result().showdown);
  const LegalActions legal = hand.legal();
  EXPECT_FALSE(legal.can_check || legal.can_raise);
  EXPECT_EQ(hand.check(Action::fold()), "the hand is over");
  EXPECT_THROW(hand.apply(Action::fold()), std::invalid_argument);
}

TEST(HoldemTable, WhenEveryoneFoldsTheBigBlindWinsWithoutAShowdown) {
  Hand hand(table(4), /*button=*/0, {1000, 1000, 1000, 1000}, shuffled_deck(12));
  act(hand, 3, Action::fold());
  act(hand, 0, Action::fold());
  act(hand, 1, Action::fold());
  ASSERT_TRUE(hand.over());
  const HandResult& result = hand.result();
  EXPECT_FALSE(result.showdown);
  EXPECT_TRUE(hand.board().empty());
  for (const auto& shown : result.shown) EXPECT_FALSE(shown.has_value());
  ASSERT_EQ(result.awards.size(), 1u);
  expect_award(result.awards[0], 10, {2});  // its own other 5 were never called
  EXPECT_EQ(result.net, (Stacks{0, -5, 5, 0}));
  EXPECT_EQ(hand.seats()[2].stack, 1005);
}

// --- legality --------------------------------------------------------------

TEST(HoldemTable, FoldingIsAlwaysLegalAndTheReasonsNameTheRule) {
  Hand hand(table(3), /*button=*/0, {1000, 1000, 1000}, shuffled_deck(13));
  EXPECT_EQ(hand.check(Action::check()), "cannot check: 10 to call");
  EXPECT_EQ(hand.check(Action::raise_to(15)), "raise to 15 is below the minimum 20");
  EXPECT_EQ(hand.check({ActionKind::kBigBlind, 10}), "blinds are posted by the table, not played");
  act(hand, 0, Action::call());
  act(hand, 1, Action::call());
  ASSERT_EQ(hand.to_act(), 2);  // the big blind's option
  EXPECT_TRUE(hand.legal().can_check);
  EXPECT_EQ(hand.legal().call_amount, 0);
  EXPECT_EQ(hand.check(Action::fold()), "");
  EXPECT_EQ(hand.check(Action::call()), "nothing to call: check or raise");
  hand.apply(Action::fold());
  EXPECT_TRUE(hand.seats()[2].folded);
}

TEST(HoldemTable, IllegalActionsLeaveTheHandUnchanged) {
  Hand hand = flop_with_a_short_stack();
  act(hand, 1, Action::raise_to(100));
  act(hand, 2, Action::raise_to(150));
  act(hand, 0, Action::call());
  const std::string before = snapshot(hand);
  for (const Action& illegal : {Action::check(), Action::raise_to(250), Action::raise_to(5000),
                                Action{ActionKind::kSmallBlind, 5}}) {
    const std::string reason = hand.check(illegal);
    ASSERT_FALSE(reason.empty());
    try {
      hand.apply(illegal);
      ADD_FAILURE() << "accepted " << action_name(illegal.kind);
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(e.what(), reason);
    }
    EXPECT_EQ(snapshot(hand), before);
  }
}

TEST(HoldemTable, TheConstructorChecksItsArguments) {
  const Stacks three = {100, 100, 100};
  const auto rejects = [](TableConfig config, int button, Stacks stacks) {
    EXPECT_THROW(Hand(config, button, stacks, shuffled_deck(14)), std::invalid_argument)
        << config.seats << " seats, button " << button;
  };
  rejects(table(1), 0, {100});
  rejects(table(10), 0, Stacks(10, 100));
  TableConfig config = table(3);
  config.small_blind = 0;
  rejects(config, 0, three);
  config = table(3);
  config.big_blind = -10;
  rejects(config, 0, three);
  config = table(3);
  config.small_blind = 20;
  rejects(config, 0, three);
  rejects(table(3), 0, {100, 100});
  rejects(table(3), 0, {100, 0, 0});
  rejects(table(3), 0, {100, -1, 100});
  rejects(table(3), -1, three);
  rejects(table(3), 3, three);
  EXPECT_NO_THROW(Hand(table(3), 2, three, shuffled_deck(14)));
}

TEST(HoldemTable, ACopyPlaysOnWithoutTouchingTheOriginal) {
  Hand hand(table(3), /*button=*/0, {1000, 1000, 1000}, shuffled_deck(15));
  act(hand, 0, Action::raise_to(30));
  const std::string before = snapshot(hand);
  Hand copy = hand;
  copy.apply(Action::fold());
  while (!copy.over()) copy.apply(copy.legal().can_check ? Action::check() : Action::call());
  EXPECT_EQ(snapshot(hand), before);
  EXPECT_EQ(hand.to_act(), 1);
  EXPECT_FALSE(hand.seats()[1].folded);
}

TEST(HoldemTable, TheLogRecordsBlindsAndEveryAction) {
  Hand hand(table(3), /*button=*/0, {1000, 1000, 1000}, shuffled_deck(16));
  act(hand, 0, Action::raise_to(30));
  act(hand, 1, Action::call());
  act(hand, 2, Action::fold());
  act(hand, 1, Action::check());
  const std::vector<ActionRecord>& log = hand.log();
  ASSERT_EQ(log.size(), 6u);
  const auto expect_record = [&](std::size_t i, int seat, Street street, ActionKind kind,
                                 std::int64_t added, std::int64_t bet_to) {
    EXPECT_EQ(log[i].seat, seat) << i;
    EXPECT_EQ(log[i].street, street) << i;
    EXPECT_EQ(log[i].kind, kind) << i;
    EXPECT_EQ(log[i].added, added) << i;
    EXPECT_EQ(log[i].bet_to, bet_to) << i;
    EXPECT_FALSE(log[i].all_in) << i;
  };
  expect_record(0, 1, Street::kPreflop, ActionKind::kSmallBlind, 5, 5);
  expect_record(1, 2, Street::kPreflop, ActionKind::kBigBlind, 10, 10);
  expect_record(2, 0, Street::kPreflop, ActionKind::kRaise, 30, 30);
  expect_record(3, 1, Street::kPreflop, ActionKind::kCall, 25, 30);
  expect_record(4, 2, Street::kPreflop, ActionKind::kFold, 0, 10);
  expect_record(5, 1, Street::kFlop, ActionKind::kCheck, 0, 0);
}

TEST(HoldemTable, NamesStreetsAndActions) {
  EXPECT_STREQ(street_name(Street::kPreflop), "preflop");
  EXPECT_STREQ(street_name(Street::kRiver), "river");
  EXPECT_STREQ(action_name(ActionKind::kRaise), "raise");
  EXPECT_STREQ(action_name(ActionKind::kSmallBlind), "small_blind");
  EXPECT_STREQ(action_name(ActionKind::kBigBlind), "big_blind");
}

// --- property test ---------------------------------------------------------

Stacks random_stacks(DeterministicRng& rng, int seats, std::int64_t big_blind) {
  Stacks stacks;
  for (int i = 0; i < seats; ++i) {
    const int kind = rng.between(0, 9);
    if (kind == 0) {
      stacks.push_back(0);  // sits out
    } else if (kind <= 3) {
      stacks.push_back(rng.between(1, static_cast<int>(2 * big_blind)));  // short, blinds all in
    } else {
      stacks.push_back(rng.between(5, 200) * big_blind + rng.between(0, 9));
    }
  }
  if (std::count_if(stacks.begin(), stacks.end(), [](std::int64_t s) { return s > 0; }) < 2) {
    stacks[0] = stacks[1] = 50 * big_blind;
  }
  return stacks;
}

Action random_action(DeterministicRng& rng, const LegalActions& legal) {
  const int roll = rng.between(0, 99);
  if (roll < 8) return Action::fold();
  if (legal.can_raise && roll < 40) {
    switch (rng.between(0, 3)) {
      case 0: return Action::raise_to(legal.min_raise_to);
      case 1: return Action::raise_to(legal.max_raise_to);  // all in
      default: {
        const auto span = static_cast<std::uint64_t>(legal.max_raise_to - legal.min_raise_to);
        const auto extra = static_cast<std::int64_t>(rng.below(span + 1));
        return Action::raise_to(legal.min_raise_to + extra);
      }
    }
  }
  return legal.can_check ? Action::check() : Action::call();
}

// What must hold at the end of any hand.
void expect_settled(const Hand& hand, const Stacks& start, int id) {
  const HandResult& result = hand.result();
  const std::vector<SeatState>& seats = hand.seats();
  ASSERT_EQ(result.net.size(), start.size()) << "hand " << id;
  EXPECT_EQ(std::accumulate(result.net.begin(), result.net.end(), std::int64_t{0}), 0)
      << "hand " << id;
  int live = 0;
  std::vector<std::int64_t> logged(seats.size(), 0);
  for (const ActionRecord& record : hand.log()) {
    logged[static_cast<std::size_t>(record.seat)] += record.added;
  }
  for (std::size_t i = 0; i < seats.size(); ++i) {
    const bool is_live = seats[i].in_hand && !seats[i].folded;
    live += is_live ? 1 : 0;
    // A seat wins from each other seat at most what it matched itself.
    std::int64_t winnable = 0;
    for (const SeatState& other : seats) winnable += std::min(other.committed, seats[i].committed);
    EXPECT_LE(result.net[i], winnable - seats[i].committed) << "hand " << id;
    EXPECT_GE(result.net[i], -seats[i].committed) << "hand " << id;
    EXPECT_GE(seats[i].stack, 0) << "hand " << id;
    EXPECT_EQ(result.net[i], seats[i].stack - start[i]) << "hand " << id;
    EXPECT_EQ(logged[i], seats[i].committed) << "hand " << id;
    EXPECT_EQ(result.shown[i].has_value(), result.showdown && is_live) << "hand " << id;
  }
  EXPECT_EQ(result.showdown, live > 1) << "hand " << id;
  if (result.showdown) {
    EXPECT_EQ(hand.board().size(), 5u) << "hand " << id;
  }
  const std::vector<Pot> pots = hand.pots();
  ASSERT_EQ(pots.size(), result.awards.size()) << "hand " << id;
  std::int64_t awarded = 0;
  for (std::size_t p = 0; p < pots.size(); ++p) {
    EXPECT_EQ(result.awards[p].amount, pots[p].amount) << "hand " << id;
    EXPECT_FALSE(result.awards[p].winners.empty()) << "hand " << id;
    for (const int winner : result.awards[p].winners) {
      EXPECT_TRUE(std::count(pots[p].eligible.begin(), pots[p].eligible.end(), winner))
          << "hand " << id;
    }
    awarded += pots[p].amount;
  }
  EXPECT_LE(awarded, hand.pot()) << "hand " << id;
}

TEST(HoldemTable, RandomHandsConserveChipsAndAlwaysEnd) {
  DeterministicRng rng(20240611);
  for (int id = 0; id < 20000; ++id) {
    TableConfig config;
    config.seats = rng.between(2, 9);
    config.small_blind = rng.between(1, 10);
    config.big_blind = config.small_blind + rng.between(0, 10);
    const Stacks start = random_stacks(rng, config.seats, config.big_blind);
    const std::int64_t chips = std::accumulate(start.begin(), start.end(), std::int64_t{0});
    Hand hand(config, rng.between(0, config.seats - 1), start, Deck(rng));
    for (int actions = 0; !hand.over(); ++actions) {
      ASSERT_LT(actions, 500) << "hand " << id << " never ends";
      const SeatState& actor = hand.seats()[static_cast<std::size_t>(hand.to_act())];
      ASSERT_TRUE(actor.in_hand && !actor.folded && !actor.all_in) << "hand " << id;
      hand.apply(random_action(rng, hand.legal()));
      if (hand.over()) break;
      std::int64_t behind = 0;
      for (const SeatState& s : hand.seats()) behind += s.stack;
      ASSERT_EQ(behind + hand.pot(), chips) << "hand " << id;
    }
    expect_settled(hand, start, id);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace kvframe::examples::holdem
