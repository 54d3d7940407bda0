// Hand histories in PHH (examples/holdem/hand_history.h): player order from
// the button's left, blinds left to the reader, board cards between streets,
// an all-in's cards shown before the run-out, and the deck kept for replays.
// tests/examples/holdem_phh_replay.sh replays whole matches in PokerKit.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "common/deterministic_rng.h"
#include "holdem/hand_history.h"

namespace kvframe::examples::holdem {
namespace {

TableConfig table(int seats) {
  TableConfig config;
  config.seats = seats;  // blinds 5/10
  return config;
}

std::string hole(const Hand& hand, int seat) {
  const std::vector<Card>& cards = hand.seats()[static_cast<std::size_t>(seat)].hole;
  return card_name(cards[0]) + card_name(cards[1]);
}

std::string board(const Hand& hand, std::size_t from, std::size_t to) {
  std::string text;
  for (std::size_t i = from; i < to; ++i) text += card_name(hand.board()[i]);
  return text;
}

std::string field(const std::string& phh, const std::string& name) {
  const std::size_t start = phh.find("\n" + name + " = ");
  if (start == std::string::npos) return "<missing " + name + ">";
  const std::size_t value = start + name.size() + 4;
  return phh.substr(value, phh.find('\n', value) - value);
}

struct Played {
  Hand hand;
  std::vector<Card> deck;
};

Played play_from(const TableConfig& config, int button, const std::vector<std::int64_t>& stacks, std::uint64_t seed) {
  DeterministicRng rng(seed);
  Deck deck(rng);
  std::vector<Card> order = deck.order();
  return {Hand(config, button, stacks, std::move(deck)), std::move(order)};
}

TEST(HoldemHandHistory, AnAllInShowsItsCardsBeforeTheBoardIsRunOut) {
  Played p = play_from(table(3), /*button=*/0, {1000, 300, 1000}, 1);
  Hand& hand = p.hand;
  hand.apply(Action::call());          // seat 0, the button, limps
  hand.apply(Action::raise_to(300));   // seat 1, small blind: all in
  hand.apply(Action::call());          // seat 2, big blind
  hand.apply(Action::fold());          // seat 0
  ASSERT_TRUE(hand.over());
  const std::string phh = phh_hand(hand, 7, default_players(3), p.deck, 42);

  EXPECT_EQ(phh.substr(0, 4), "[7]\n");
  EXPECT_EQ(field(phh, "variant"), "\"NT\"");
  EXPECT_EQ(field(phh, "antes"), "[0, 0, 0]");
  EXPECT_EQ(field(phh, "blinds_or_straddles"), "[5, 10, 0]");
  EXPECT_EQ(field(phh, "min_bet"), "10");
  // p1 = seat 1 (small blind), p2 = seat 2 (big blind), p3 = seat 0 (button).
  EXPECT_EQ(field(phh, "seats"), "[2, 3, 1]");
  EXPECT_EQ(field(phh, "starting_stacks"), "[300, 1000, 1000]");
  const std::string expected_actions =
      "[\"d dh p1 " + hole(hand, 1) + "\", \"d dh p2 " + hole(hand, 2) + "\", \"d dh p3 " + hole(hand, 0) +
      "\", \"p3 cc\", \"p1 cbr 300\", \"p2 cc\", \"p3 f\", \"p1 sm " + hole(hand, 1) + "\", \"p2 sm " +
      hole(hand, 2) + "\", \"d db " + board(hand, 0, 3) + "\", \"d db " + board(hand, 3, 4) + "\", \"d db " +
      board(hand, 4, 5) + "\"]";
  EXPECT_EQ(field(phh, "actions"), expected_actions);
  const auto& s = hand.seats();
  EXPECT_EQ(field(phh, "finishing_stacks"),
            "[" + std::to_string(s[1].stack) + ", " + std::to_string(s[2].stack) + ", " + std::to_string(s[0].stack) + "]");
  EXPECT_EQ(s[0].stack + s[1].stack + s[2].stack, 2300);
  EXPECT_EQ(field(phh, "_button_seat"), "1");
  EXPECT_EQ(field(phh, "_seed"), "\"42\"");
}

TEST(HoldemHandHistory, HeadsUpListsTheBigBlindFirstAndTheButtonLast) {
  Played p = play_from(table(2), /*button=*/1, {1000, 1000}, 2);
  p.hand.apply(Action::fold());  // the button, small blind, folds
  const std::string phh = phh_hand(p.hand, 1, default_players(2), p.deck, 1);
  EXPECT_EQ(field(phh, "seats"), "[1, 2]");
  EXPECT_EQ(field(phh, "blinds_or_straddles"), "[5, 10]");  // readers swap them heads-up
  EXPECT_EQ(field(phh, "actions"),
            "[\"d dh p1 " + hole(p.hand, 0) + "\", \"d dh p2 " + hole(p.hand, 1) + "\", \"p2 f\"]");
  EXPECT_EQ(field(phh, "finishing_stacks"), "[1005, 995]");
}

TEST(HoldemHandHistory, TheRecordedDeckDealsTheSameHandAgain) {
  Played p = play_from(table(4), /*button=*/2, {1000, 1000, 1000, 1000}, 3);
  while (!p.hand.over()) p.hand.apply(p.hand.legal().can_check ? Action::check() : Action::call());
  const std::string phh = phh_hand(p.hand, 1, default_players(4), p.deck, 3);
  const std::string deck_text = field(phh, "_deck");
  ASSERT_EQ(deck_text.size(), 2u + 2u * kCards);
  std::vector<Card> order;
  for (std::size_t i = 1; i + 1 < deck_text.size(); i += 2) order.push_back(*parse_card(deck_text.substr(i, 2)));
  Hand again(table(4), /*button=*/2, {1000, 1000, 1000, 1000}, Deck(order));
  while (!again.over()) again.apply(again.legal().can_check ? Action::check() : Action::call());
  for (int seat = 0; seat < 4; ++seat) EXPECT_EQ(hole(again, seat), hole(p.hand, seat));
  EXPECT_EQ(again.board(), p.hand.board());
  EXPECT_EQ(again.result().net, p.hand.result().net);
}

TEST(HoldemHandHistory, NamesAreQuotedAndUnfinishedHandsRefused) {
  Played p = play_from(table(2), /*button=*/0, {1000, 1000}, 4);
  EXPECT_THROW(phh_hand(p.hand, 1, default_players(2), p.deck, 1), std::logic_error);
  p.hand.apply(Action::fold());
  const std::string phh = phh_hand(p.hand, 1, {{"p1", "Ada \"Ace\""}, {"p2", "back\\slash"}}, p.deck, 1);
  EXPECT_EQ(field(phh, "players"), "[\"back\\\\slash\", \"Ada \\\"Ace\\\"\"]");
}

}  // namespace
}  // namespace kvframe::examples::holdem
