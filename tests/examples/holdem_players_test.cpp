// The rule bots: only legal actions in thousands of situations (2..9 seats,
// deep and short stacks), the tight-aggressive bot's raises among the sizes
// offered, each bot's character, determinism, and the
// tight-aggressive bot beating the random one and the calling station.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "holdem/players.h"
#include "holdem/raise_sizes.h"

namespace kvframe::examples::holdem {
namespace {

constexpr std::int64_t kStack = 1000;  // 100 big blinds at 5/10
constexpr int kTestTrials = 150;       // equity deals per TAG decision: enough to play well, quick

std::unique_ptr<Player> make_bot(const std::string& kind, std::uint64_t seed) {
  if (kind == "tag") return std::make_unique<TightAggressive>(seed, TightAggressive::Params{kTestTrials});
  return make_rule_player(kind, seed);
}

struct Played {
  int seat;
  Action action;
};

// The raises offered now (raise_sizes.h) are legal, sorted, distinct and end
// all in; a tight-aggressive raise is one of them, so the LLM bot, held to
// the menu, can always make the raise its target makes.
void expect_raise_on_menu(const Hand& hand, const std::string& kind, const Action& action) {
  const LegalActions legal = hand.legal();
  const std::vector<std::int64_t> offered = raise_amounts(raise_menu(hand));
  if (!legal.can_raise) {
    EXPECT_TRUE(offered.empty());
    return;
  }
  ASSERT_FALSE(offered.empty());
  EXPECT_TRUE(std::is_sorted(offered.begin(), offered.end()));
  EXPECT_EQ(std::adjacent_find(offered.begin(), offered.end()), offered.end());
  EXPECT_GE(offered.front(), legal.min_raise_to);
  EXPECT_EQ(offered.back(), legal.max_raise_to);
  if (kind == "tag" && action.kind == ActionKind::kRaise) {
    EXPECT_NE(std::find(offered.begin(), offered.end(), action.amount), offered.end())
        << "tag raised to " << action.amount << ", not an offered size";
  }
}

// Plays one hand; each decision is checked against the rules before it is
// applied, so an illegal one fails the test with the reason.
Hand play_hand(const TableConfig& config, int button, const std::vector<std::int64_t>& stacks,
               DeterministicRng& deck_rng, std::vector<std::unique_ptr<Player>>& bots, const MatchMemory& memory,
               std::uint64_t number, std::vector<Played>* played = nullptr) {
  Hand hand(config, button, stacks, Deck(deck_rng));
  while (!hand.over()) {
    const int seat = hand.to_act();
    const Decision decision = bots[static_cast<std::size_t>(seat)]->decide({hand, seat, memory, number});
    EXPECT_EQ(hand.check(decision.action), "") << bots[static_cast<std::size_t>(seat)]->kind() << " at seat " << seat;
    expect_raise_on_menu(hand, bots[static_cast<std::size_t>(seat)]->kind(), decision.action);
    EXPECT_FALSE(decision.invalid);
    if (!hand.check(decision.action).empty()) return hand;
    if (played) played->push_back({seat, decision.action});
    hand.apply(decision.action);
  }
  return hand;
}

TEST(HoldemPlayers, MakesEveryRuleBotByName) {
  for (const char* kind : {"random", "station", "tag"}) {
    const auto player = make_rule_player(kind, 1);
    ASSERT_NE(player, nullptr) << kind;
    EXPECT_EQ(player->kind(), kind);
  }
  EXPECT_EQ(make_rule_player("llm", 1), nullptr);
  EXPECT_EQ(make_rule_player("", 1), nullptr);
}

TEST(HoldemPlayers, RuleBotsOnlyMakeLegalActions) {
  const char* const kinds[] = {"random", "station", "tag"};
  DeterministicRng table_rng(2024);
  int decisions = 0;
  for (int seats = 2; seats <= 9; ++seats) {
    TableConfig config;
    config.seats = seats;
    MatchMemory memory(default_players(seats), 0);
    std::vector<std::unique_ptr<Player>> bots;
    for (int i = 0; i < seats; ++i) {
      const std::string kind = kinds[table_rng.below(3)];
      bots.push_back(make_bot(kind, table_rng.below(1u << 30)));
    }
    for (int n = 1; n <= 150; ++n) {
      // Every third hand with stacks from nothing up: seats sitting out (a
      // dead button), short all-ins, blinds posted all in, side pots,
      // raises that cannot be full raises.
      std::vector<std::int64_t> stacks(static_cast<std::size_t>(seats), kStack);
      if (n % 3 == 0) {
        for (auto& stack : stacks) {
          const double kind = table_rng.unit();
          stack = kind < 0.1 ? 0 : kind < 0.4 ? table_rng.between(1, 60) : table_rng.between(61, 3000);
        }
        if (std::count_if(stacks.begin(), stacks.end(), [](std::int64_t stack) { return stack > 0; }) < 2) {
          stacks[0] = stacks[1] = kStack;  // a hand needs two seats with chips
        }
      }
      std::vector<Played> played;
      play_hand(config, n % seats, stacks, table_rng, bots, memory, static_cast<std::uint64_t>(n), &played);
      decisions += static_cast<int>(played.size());
      if (HasFailure()) return;
    }
  }
  std::printf("%d legal decisions\n", decisions);
  EXPECT_GT(decisions, 5000);
}

TEST(HoldemPlayers, CallingStationOnlyChecksOrCalls) {
  TableConfig config;
  config.seats = 4;
  MatchMemory memory(default_players(4), 0);
  std::vector<std::unique_ptr<Player>> bots;
  bots.push_back(std::make_unique<CallingStation>());
  bots.push_back(make_bot("random", 1));
  bots.push_back(make_bot("tag", 2));
  bots.push_back(make_bot("random", 3));
  DeterministicRng deck_rng(5);
  int checks = 0, calls = 0;
  for (int n = 1; n <= 300; ++n) {
    std::vector<Played> played;
    play_hand(config, n % 4, {kStack, kStack, kStack, kStack}, deck_rng, bots, memory, static_cast<std::uint64_t>(n),
              &played);
    for (const Played& p : played) {
      if (p.seat != 0) continue;
      ASSERT_TRUE(p.action.kind == ActionKind::kCheck || p.action.kind == ActionKind::kCall)
          << action_name(p.action.kind);
      (p.action.kind == ActionKind::kCheck ? checks : calls)++;
    }
  }
  EXPECT_GT(checks, 50);
  EXPECT_GT(calls, 50);
}

TEST(HoldemPlayers, RandomPlayerUsesEveryChoice) {
  TableConfig config;
  config.seats = 3;
  MatchMemory memory(default_players(3), 0);
  std::vector<std::unique_ptr<Player>> bots;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) bots.push_back(make_bot("random", seed));
  DeterministicRng deck_rng(8);
  int count[4] = {};  // fold, check, call, raise
  int min_raises = 0;
  for (int n = 1; n <= 300; ++n) {
    Hand hand(config, n % 3, {kStack, kStack, kStack}, Deck(deck_rng));
    while (!hand.over()) {
      const LegalActions legal = hand.legal();
      const Action action =
          bots[static_cast<std::size_t>(hand.to_act())]->decide({hand, hand.to_act(), memory, 1}).action;
      ASSERT_EQ(hand.check(action), "");
      EXPECT_FALSE(action.kind == ActionKind::kFold && legal.can_check) << "folded a free check";
      ++count[static_cast<int>(action.kind)];
      min_raises += action.kind == ActionKind::kRaise && action.amount == legal.min_raise_to;
      hand.apply(action);
    }
  }
  for (int kind = 0; kind < 4; ++kind) EXPECT_GT(count[kind], 30) << action_name(static_cast<ActionKind>(kind));
  EXPECT_GT(min_raises, 0);
  EXPECT_LT(min_raises, count[3]);
}

std::vector<Played> play_table(std::uint64_t seed) {
  TableConfig config;
  config.seats = 6;
  MatchMemory memory(default_players(6), 0);
  std::vector<std::unique_ptr<Player>> bots;
  const char* const kinds[] = {"tag", "random", "station", "tag", "random", "tag"};
  for (std::uint64_t i = 0; i < 6; ++i) bots.push_back(make_bot(kinds[i], seed * 10 + i));
  DeterministicRng deck_rng(seed);
  std::vector<Played> played;
  for (int n = 1; n <= 60; ++n) {
    play_hand(config, n % 6, std::vector<std::int64_t>(6, kStack), deck_rng, bots, memory,
              static_cast<std::uint64_t>(n), &played);
  }
  return played;
}

bool same(const std::vector<Played>& a, const std::vector<Played>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].seat != b[i].seat || a[i].action.kind != b[i].action.kind || a[i].action.amount != b[i].action.amount) {
      return false;
    }
  }
  return true;
}

TEST(HoldemPlayers, SameSeedSameActions) {
  EXPECT_TRUE(same(play_table(1), play_table(1)));
  EXPECT_FALSE(same(play_table(1), play_table(2)));
}

TEST(HoldemPlayers, TightAggressiveRaisesAcesAndFoldsTrash) {
  // Six-handed, everyone a TAG: whoever is first in with aces raises, and
  // seven-deuce offsuit is never played from early position.
  TableConfig config;
  config.seats = 6;
  MatchMemory memory(default_players(6), 0);
  TightAggressive tag(1, TightAggressive::Params{kTestTrials});
  DeterministicRng deck_rng(3);
  int aces = 0, trash = 0;
  for (int n = 0; n < 20000 && (aces < 5 || trash < 5); ++n) {
    Hand hand(config, n % 6, std::vector<std::int64_t>(6, kStack), Deck(deck_rng));
    const SeatState& first = hand.seats()[static_cast<std::size_t>(hand.to_act())];  // UTG, nobody in yet
    const int high = std::max(rank_of(first.hole[0]), rank_of(first.hole[1]));
    const int low = std::min(rank_of(first.hole[0]), rank_of(first.hole[1]));
    const bool is_aces = high == 12 && low == 12;
    const bool is_trash = high == 5 && low == 0 && suit_of(first.hole[0]) != suit_of(first.hole[1]);
    if (!is_aces && !is_trash) continue;
    const Action action = tag.decide({hand, hand.to_act(), memory, 1}).action;
    if (is_aces) {
      ++aces;
      EXPECT_EQ(action.kind, ActionKind::kRaise);
      EXPECT_EQ(action.amount, 30);  // 3 big blinds
    } else {
      ++trash;
      EXPECT_EQ(action.kind, ActionKind::kFold);
    }
  }
  EXPECT_GE(aces, 5);
  EXPECT_GE(trash, 5);
}

// Heads-up, stacks reset each hand, the button alternating: the TAG's net.
std::int64_t heads_up_net(const std::string& opponent, int hands, std::uint64_t seed) {
  TableConfig config;
  config.seats = 2;
  MatchMemory memory(default_players(2), 0);
  std::vector<std::unique_ptr<Player>> bots;
  bots.push_back(make_rule_player("tag", seed));  // as shipped: full equity trials
  bots.push_back(make_bot(opponent, seed + 1));
  DeterministicRng deck_rng(seed);
  std::int64_t net = 0;
  for (int n = 1; n <= hands; ++n) {
    const Hand hand = play_hand(config, n % 2, {kStack, kStack}, deck_rng, bots, memory, static_cast<std::uint64_t>(n));
    if (!hand.over()) return net;  // an illegal action, already reported
    net += hand.result().net[0];
  }
  return net;
}

TEST(HoldemPlayers, TightAggressiveBeatsRandomAndStationHeadsUp) {
  constexpr int kHands = 2000;
  for (const char* opponent : {"random", "station"}) {
    for (std::uint64_t seed : {77, 78, 79}) {
      const std::int64_t net = heads_up_net(opponent, kHands, seed);
      std::printf("tag vs %s over %d hands, seed %llu: %+lld chips (%+.1f bb/100)\n", opponent, kHands,
                  static_cast<unsigned long long>(seed), static_cast<long long>(net),
                  static_cast<double>(net) / 10.0 / (kHands / 100.0));
      EXPECT_GT(net, 0) << opponent << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace kvframe::examples::holdem
