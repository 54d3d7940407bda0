// The seat's own read (holdem/seat_read.h, holdem/hand_class.h): hand classes
// in words for a table of hands, the equity deterministic for a seed and the
// very estimate the tight-aggressive bot decides on, the chip arithmetic, the
// block in the gamecore, and that it says nothing of the other seats' cards.
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "holdem/gamecore.h"
#include "holdem/hand_class.h"
#include "holdem/players.h"
#include "holdem/seat_read.h"
#include "kvframe/json_blocker/json_blocker.h"

namespace kvframe::examples::holdem {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kStack = 1000;  // 100 big blinds at 5/10
constexpr int kTestTrials = 200;

// "Kd Qs" -> its cards.
std::vector<Card> cards(const std::string& text) {
  std::vector<Card> out;
  for (std::size_t at = 0; at < text.size(); at += 3) out.push_back(parse_card(text.substr(at, 2)).value());
  return out;
}

std::array<Card, 2> hole(const std::string& text) {
  const std::vector<Card> two = cards(text);
  return {two.at(0), two.at(1)};
}

// A deck dealing `holes[seat]` to each seat and then `board`, the rest of the
// cards after them: the table deals one card at a time from the button's left.
Deck stacked_deck(int button, const std::vector<std::string>& holes, const std::string& board) {
  const int seats = static_cast<int>(holes.size());
  std::vector<Card> order;
  for (std::size_t round = 0; round < 2; ++round) {
    for (int step = 1; step <= seats; ++step) {
      order.push_back(cards(holes[static_cast<std::size_t>((button + step) % seats)]).at(round));
    }
  }
  for (Card card : cards(board)) order.push_back(card);
  std::set<Card> used(order.begin(), order.end());
  for (Card card = 0; card < kCards; ++card) {
    if (!used.count(card)) order.push_back(card);
  }
  return Deck(order);
}

// --- hand classes ------------------------------------------------------------

TEST(HoldemSeatRead, NamesStartingHands) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"As Ah", "pocket aces"},
      {"Qd Qs", "pocket queens"},
      {"2c 2d", "pocket twos"},
      {"As Ks", "ace-king suited"},
      {"Kh Ad", "ace-king offsuit"},
      {"Td Kh", "king-ten offsuit"},
      {"Qc Tc", "queen-ten suited"},
      {"Ah 5h", "ace with a small kicker, suited"},
      {"9c Ad", "ace with a small kicker, offsuit"},
      {"9s 8s", "suited connectors"},
      {"Ts 9s", "suited connectors"},
      {"5c 4d", "offsuit connectors"},
      {"Js 9s", "suited one-gapper"},
      {"Jd 9s", "offsuit junk"},
      {"7h 2h", "suited junk"},
      {"7c 2d", "offsuit junk"},
  };
  for (const auto& [text, words] : table) {
    EXPECT_EQ(hand_class(hole(text), {}), words) << text;
    const std::array<Card, 2> two = hole(text);
    EXPECT_EQ(starting_hand_class(two[1], two[0]), words) << text << ": the order of the cards does not matter";
  }
}

TEST(HoldemSeatRead, NamesMadeHandsAndDraws) {
  struct Row {
    const char* hole;
    const char* board;
    const char* words;
  };
  const Row table[] = {
      {"Kd Qs", "Kh 7c 2d", "top pair, queen kicker"},
      {"As Kd", "Kh 7c 2d 9s 4h", "top pair, ace kicker"},  // the river: no draws
      {"7s 6d", "Kh 7c 2d", "middle pair, sevens"},
      {"2s 3d", "Kh 7c 2d", "bottom pair, twos"},
      {"Ks 7s", "Kh 7c 2d", "two pair, kings and sevens"},
      {"7s 7d", "Kh 7c 2d", "set of sevens"},
      {"As 7s", "7c 7d Kh", "trips, sevens"},
      {"Qs Qd", "Jh 7c 2d", "overpair, queens"},
      {"Qs Qd", "Jh 7c 2d 3s", "overpair, queens"},
      {"8s 8d", "Jh 7c 2d", "underpair, eights"},
      {"As Kd", "7c 8h 2d", "nothing"},
      {"As Kd", "7c 7h 2d", "nothing"},  // the board's pair is everyone's
      {"Ah 9h", "Kh 7h 2d", "flush draw"},
      {"As 9s", "Kh 7h 2h", "nothing"},  // four hearts, none of them the seat's
      {"9s 8d", "7h 6c 2d", "open-ended straight draw"},
      {"Jc Tc", "9d 8s 2h", "open-ended straight draw"},
      {"As 2d", "3h 4c Kd", "gutshot"},
      {"Ah 5h", "3h 4h Kd", "flush draw, gutshot"},
      {"Kh Qh", "Kd 7h 2h", "top pair, queen kicker, flush draw"},
      {"9h 8h", "7h 6h 5c", "straight, nine high, flush draw"},
      {"Ah Kh", "Qh 7h 2h", "flush, ace high"},
      {"7s 7d", "7c Kh Kd", "full house, sevens full of kings"},
      {"7s 7d", "7c 7h Kd", "four of a kind, sevens"},
      {"2c 3d", "Ah Kh Qd Jc Ts", "straight, ace high, on the board"},
      {"9c 3d", "Ah Kh Qd Jc Ts", "straight, ace high, on the board"},
      {"Kc Qd", "Ah Jh Td 5c 2s", "straight, ace high"},
  };
  for (const Row& row : table) {
    EXPECT_EQ(hand_class(hole(row.hole), cards(row.board)), row.words) << row.hole << " on " << row.board;
  }
}

TEST(HoldemSeatRead, HandClassRefusesImpossibleDeals) {
  EXPECT_THROW(hand_class(hole("As Kd"), cards("7c 8h")), std::invalid_argument);
  EXPECT_THROW(hand_class(hole("As Kd"), cards("As 8h 2d")), std::invalid_argument);
  EXPECT_THROW(hand_class(hole("As As"), {}), std::invalid_argument);
}

// --- the read of a decision --------------------------------------------------

// Three seats, p1 the button: p1 raises to 30, p2 (small blind) calls, p3
// (big blind) is to act with 20 to call.
Hand facing_a_raise(const std::vector<std::int64_t>& stacks) {
  TableConfig config;
  config.seats = 3;
  Hand hand(config, 0, stacks, stacked_deck(0, {"Ah Kh", "7c 2d", "Qs Qd"}, "Jh 7h 2s 9c 4d"));
  hand.apply(Action::raise_to(30));
  hand.apply(Action::call());
  return hand;
}

TEST(HoldemSeatRead, PotOddsToCallAndStackToPot) {
  DeterministicRng rng(1);
  const Hand hand = facing_a_raise({kStack, kStack, kStack});
  ASSERT_EQ(hand.to_act(), 2);
  const SeatRead read = seat_read(hand, 2, rng, kTestTrials);
  EXPECT_EQ(read.hand, "pocket queens");
  EXPECT_EQ(read.opponents, 2);
  EXPECT_EQ(read.to_call, 20);
  EXPECT_DOUBLE_EQ(read.pot_odds, 20.0 / (70 + 20));  // a pot of 30 + 30 + 10
  // Effective stack: p3's 990 behind against the deepest opponent's 970.
  EXPECT_DOUBLE_EQ(read.spr, 970.0 / 70);
  const Json json = Json::parse(seat_read_json(read));
  const int equity_pct = json["equity_pct"].get<int>();
  EXPECT_EQ(json.dump(), R"({"hand":"pocket queens","equity_pct":)" + std::to_string(equity_pct) +
                             R"(,"opponents":2,"to_call":20,"pot_odds_pct":22,"call_edge_pct":)" +
                             std::to_string(equity_pct - 22) + R"(,"spr":13.9})");

  // A short stack: the call is all it has left, and the SPR is its stack's.
  const Hand short_stacked = facing_a_raise({kStack, kStack, 25});
  const SeatRead all_in = seat_read(short_stacked, 2, rng, kTestTrials);
  EXPECT_EQ(all_in.to_call, 15);
  EXPECT_DOUBLE_EQ(all_in.pot_odds, 15.0 / (70 + 15));
  EXPECT_DOUBLE_EQ(all_in.spr, 15.0 / 70);

  // Checked to: nothing to call, no odds.
  Hand flop = hand;
  flop.apply(Action::call());
  ASSERT_EQ(flop.street(), Street::kFlop);
  const SeatRead checked = seat_read(flop, flop.to_act(), rng, kTestTrials);
  EXPECT_EQ(checked.to_call, 0);
  EXPECT_EQ(checked.pot_odds, 0.0);
  EXPECT_DOUBLE_EQ(checked.spr, 970.0 / 90);

  EXPECT_EQ(pot_odds(0, 100), 0.0);
  EXPECT_DOUBLE_EQ(pot_odds(50, 150), 0.25);
  EXPECT_THROW(seat_read(hand, 0, rng), std::invalid_argument);  // not p1's turn
}

TEST(HoldemSeatRead, SentenceShowsTheBlocksNumbers) {
  DeterministicRng rng(1);
  const Hand hand = facing_a_raise({kStack, kStack, kStack});
  SeatRead read = seat_read(hand, 2, rng, kTestTrials);
  const Json json = Json::parse(seat_read_json(read));
  const int equity_pct = json["equity_pct"].get<int>(), edge = json["call_edge_pct"].get<int>();
  EXPECT_EQ(seat_read_sentence(read), "Your read: pocket queens; equity " + std::to_string(equity_pct) +
                                          "% against 2 opponents; to call 20: pot odds 22%, call edge " +
                                          (edge > 0 ? "+" : "") + std::to_string(edge) + "% (" +
                                          (edge > 0 ? "a call pays" : edge < 0 ? "a call loses" : "break-even") +
                                          "); SPR 13.9.");
  read.to_call = 0;
  read.pot_odds = 0;
  read.opponents = 1;
  read.equity = 0.304;
  EXPECT_EQ(seat_read_sentence(read), "Your read: pocket queens; equity 30% against 1 opponent; nothing to call; SPR 13.9.");
  read.to_call = 50;
  read.pot_odds = 0.5;
  EXPECT_NE(seat_read_sentence(read).find("call edge -20% (a call loses)"), std::string::npos);
}

TEST(HoldemSeatRead, ShownReadIsTheGamecoresAndOnlyTheActingSeats) {
  const Hand hand = facing_a_raise({kStack, kStack, kStack});
  DeterministicRng rng(seat_read_seed(9, 2, Street::kPreflop));
  const std::optional<SeatRead> shown = shown_read(hand, 2, 9);
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(seat_read_json(*shown), seat_read_json(seat_read(hand, 2, rng)));
  EXPECT_FALSE(shown_read(hand, 0, 9).has_value());  // p1 is not to act
}

TEST(HoldemSeatRead, EquityIsDeterministicForASeed) {
  const Hand hand = facing_a_raise({kStack, kStack, kStack});
  DeterministicRng a(42), b(42), c(43);
  const SeatRead first = seat_read(hand, 2, a), again = seat_read(hand, 2, b), other = seat_read(hand, 2, c);
  EXPECT_EQ(first.equity, again.equity);
  EXPECT_EQ(seat_read_json(first), seat_read_json(again));
  // Another seed draws other deals, of the same hand: close, rarely equal.
  EXPECT_NEAR(first.equity, other.equity, 0.08);
  // Queens against two random hands win about half the time.
  EXPECT_GT(first.equity, 0.4);
  EXPECT_LT(first.equity, 0.7);
}

// The tight-aggressive bot facing a bet postflop calls when its equity beats
// the pot odds by its margin, folds otherwise, raises only far above: with
// the same seed and trials, its estimate must be the read's to the last bit,
// so every one of its actions follows from the read.
TEST(HoldemSeatRead, EquityIsTheTightAggressiveBotsOwn) {
  constexpr double kCallMargin = 0.03;        // players.cpp's
  constexpr double kValueRaiseEquity = 0.75;  // players.cpp's
  TableConfig config;
  config.seats = 4;
  const MatchMemory memory(default_players(config.seats), 0);
  DeterministicRng deck_rng(7), station_rng(8);
  std::map<ActionKind, int> checked;  // decisions, by the action taken
  for (std::uint64_t n = 1; n <= 100; ++n) {
    Hand hand(config, static_cast<int>(n % 4), std::vector<std::int64_t>(4, kStack), Deck(deck_rng));
    while (!hand.over()) {
      const int seat = hand.to_act();
      const LegalActions legal = hand.legal();
      if (hand.street() != Street::kPreflop && !legal.can_check) {
        const std::uint64_t seed = n * 100 + hand.log().size();
        DeterministicRng read_rng(seed);
        const SeatRead read = seat_read(hand, seat, read_rng, kTestTrials);
        TightAggressive tag(seed, TightAggressive::Params{kTestTrials});
        const Action action = tag.decide({hand, seat, memory, n}).action;
        switch (action.kind) {
          case ActionKind::kCall: EXPECT_GE(read.equity, read.pot_odds + kCallMargin); break;
          case ActionKind::kFold: EXPECT_LT(read.equity, read.pot_odds + kCallMargin); break;
          case ActionKind::kRaise: EXPECT_GT(read.equity, kValueRaiseEquity); break;
          default: ADD_FAILURE() << "facing a bet the bot checked";
        }
        ++checked[action.kind];
      }
      // Someone bets now and then so that others face bets.
      const bool bet = legal.can_raise && station_rng.chance(0.3);
      hand.apply(bet ? Action::raise_to(legal.min_raise_to) : legal.can_check ? Action::check() : Action::call());
    }
  }
  EXPECT_GE(checked[ActionKind::kCall], 20);
  EXPECT_GE(checked[ActionKind::kFold], 20);
  EXPECT_GE(checked[ActionKind::kRaise], 2);
}

// --- the block in the gamecore -----------------------------------------------

TEST(HoldemSeatRead, IsTheGamecoresLastBlockForTheSeatToAct) {
  const Hand hand = facing_a_raise({kStack, kStack, kStack});
  const MatchMemory memory(default_players(3), 5);
  const Json root = Json::parse(gamecore_json(hand, 2, memory, 9));
  ASSERT_TRUE(root.contains("your_read"));
  EXPECT_EQ(std::prev(root.end()).key(), "your_read") << "read last, just before the question";
  DeterministicRng rng(seat_read_seed(9, 2, Street::kPreflop));
  EXPECT_EQ(root["your_read"].dump(), seat_read_json(seat_read(hand, 2, rng)));
  EXPECT_EQ(root["your_read"]["hand"], "pocket queens");
  // A seat watching another's turn, and a finished hand, have no read.
  EXPECT_EQ(Json::parse(gamecore_json(hand, 0, memory, 9))["your_read"], Json::object());
  // The shipped rules make it one block of its own, even a small one.
  auto rules = json_blocker::parse_rules(holdem_rules_json());
  ASSERT_TRUE(rules.ok()) << rules.error().to_string();
  auto blocks = json_blocker::Partitioner(rules.value()).partition(gamecore_json(hand, 2, memory, 9));
  ASSERT_TRUE(blocks.ok()) << blocks.error().to_string();
  const json_blocker::Block& last = blocks.value().blocks().back();
  EXPECT_EQ(last.id, "your_read");
  EXPECT_EQ(last.json(), root["your_read"].dump());
}

TEST(HoldemSeatRead, SaysNothingOfTheOtherSeatsCards) {
  // The same hand twice, the other seats' hole cards swapped for cards never
  // dealt: the acting seat's read must not change by a byte.
  TableConfig config;
  config.seats = 3;
  const MatchMemory memory(default_players(3), 0);
  const std::vector<std::string> holes = {"Ah Kh", "7c 2d", "Qs Qd"};
  const std::vector<std::string> others_swapped = {"Ah Kh", "3c 3d", "8s 8d"};
  const std::string board = "Jh 7h 2s 9c 4d";
  for (int viewer = 0; viewer < 3; ++viewer) {
    std::vector<std::string> swapped = others_swapped;
    swapped[static_cast<std::size_t>(viewer)] = holes[static_cast<std::size_t>(viewer)];
    Hand real(config, 0, {kStack, kStack, kStack}, stacked_deck(0, holes, board));
    Hand other(config, 0, {kStack, kStack, kStack}, stacked_deck(0, swapped, board));
    int reads = 0;
    while (!real.over()) {
      const int seat = real.to_act();
      if (seat == viewer) {
        const std::string read = Json::parse(gamecore_json(real, viewer, memory, 3))["your_read"].dump();
        EXPECT_EQ(read, Json::parse(gamecore_json(other, viewer, memory, 3))["your_read"].dump());
        for (std::size_t s = 0; s < holes.size(); ++s) {
          if (static_cast<int>(s) == viewer) continue;
          for (const std::string& card : card_names(real.seats()[s].hole)) {
            EXPECT_EQ(read.find(card), std::string::npos) << card << " in " << read;
          }
        }
        ++reads;
      }
      // Everyone calls or checks: the same actions in both hands.
      const Action action = real.legal().can_check ? Action::check() : Action::call();
      real.apply(action);
      other.apply(action);
    }
    EXPECT_EQ(reads, 4) << "one decision per street for p" << viewer + 1;
  }
}

}  // namespace
}  // namespace kvframe::examples::holdem
