// Matches of rule bots (no model): a fixed seed replays identically, chips are
// conserved, and the report's numbers add up.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>

#include "holdem/simulator/match.h"
#include "holdem/simulator/report.h"

namespace kvframe::examples::holdem {
namespace {

Match play(std::uint64_t seed, const std::vector<std::string>& kinds, int hands) {
  MatchParams params;
  params.table.seats = static_cast<int>(kinds.size());
  params.hands = hands;
  params.seed = seed;
  params.history_hands = 20;
  std::vector<PlayerInfo> infos = default_players(params.table.seats);
  std::vector<SeatedPlayer> seats;
  for (std::size_t s = 0; s < kinds.size(); ++s) seats.push_back({infos[s], make_rule_player(kinds[s], seed * 100 + s)});
  Match match(params, std::move(seats));
  match.play();
  return match;
}

TEST(HoldemMatchTest, AFixedSeedReplaysIdentically) {
  const std::vector<std::string> kinds = {"tag", "station", "random", "tag"};
  const Match a = play(7, kinds, 60);
  const Match b = play(7, kinds, 60);
  const Match c = play(8, kinds, 60);
  EXPECT_EQ(a.replay_record().dump(), b.replay_record().dump());
  EXPECT_EQ(a.nets(), b.nets());
  EXPECT_NE(a.replay_record().dump(), c.replay_record().dump());
}

TEST(HoldemMatchTest, EveryHandConservesChipsAndTheButtonMoves) {
  const Match match = play(3, {"random", "random", "station", "tag", "random", "tag"}, 120);
  ASSERT_EQ(match.nets().size(), 120u);
  for (const auto& net : match.nets()) EXPECT_EQ(std::accumulate(net.begin(), net.end(), std::int64_t{0}), 0);
  const auto& hands = match.replay_record()["hands"];
  for (std::size_t i = 0; i < hands.size(); ++i) EXPECT_EQ(hands[i]["button"].get<std::size_t>(), i % 6);
}

TEST(HoldemMatchTest, ReplayStepsFollowTheHand) {
  const Match match = play(5, {"tag", "station", "random"}, 20);
  for (const auto& hand : match.replay_record()["hands"]) {
    const auto& steps = hand["steps"];
    ASSERT_GE(steps.size(), 4u);  // deal, two blinds, ..., result
    EXPECT_EQ(steps.front()["kind"], "deal");
    EXPECT_EQ(steps.back()["kind"], "result");
    std::size_t board = 0;
    for (const auto& step : steps) {
      EXPECT_GE(step["board"].size(), board) << "the board never shrinks";
      board = step["board"].size();
      EXPECT_EQ(step["stacks"].size(), 3u);
    }
  }
}

// A rule bot that also records what it watched: each hand's last view is
// its result, with the hand already in the history the next deal shows.
class Watcher : public Player {
 public:
  std::string kind() const override { return "tag"; }
  Decision decide(const DecisionView& view) override { return bot_->decide(view); }
  void watch(const DecisionView& view) override {
    seen.push_back({view.hand_number, view.hand.over(), view.memory.history_json()});
  }
  struct Seen {
    std::uint64_t hand;
    bool over;
    std::string history;
  };
  std::vector<Seen> seen;

 private:
  std::unique_ptr<Player> bot_ = make_rule_player("tag", 1);
};

TEST(HoldemMatchTest, APacedTableShowsEachResultBeforeTheNextDeal) {
  MatchParams params;
  params.table.seats = 3;
  params.hands = 4;
  params.seed = 11;
  params.history_hands = 10;
  params.pace_ms = 1;
  std::vector<PlayerInfo> infos = default_players(3);
  auto watcher = std::make_unique<Watcher>();
  Watcher* seen = watcher.get();
  std::vector<SeatedPlayer> seats;
  seats.push_back({infos[0], std::move(watcher)});
  for (std::size_t s = 1; s < 3; ++s) seats.push_back({infos[s], make_rule_player("station", s)});
  Match match(params, std::move(seats));
  match.play();
  for (std::uint64_t n = 1; n <= 4; ++n) {
    std::vector<Watcher::Seen> of_hand;
    for (const auto& s : seen->seen) {
      if (s.hand == n) of_hand.push_back(s);
    }
    ASSERT_GE(of_hand.size(), 2u) << "hand " << n;
    EXPECT_FALSE(of_hand.front().over);
    EXPECT_TRUE(of_hand.back().over) << "hand " << n << " ends with its result on the table";
    EXPECT_NE(of_hand.back().history.find("hand_000" + std::to_string(n)), std::string::npos)
        << "the result's frame already holds the hand in the history";
    EXPECT_EQ(std::count_if(of_hand.begin(), of_hand.end(), [](const auto& s) { return s.over; }), 1);
  }
}

TEST(HoldemMatchTest, TheReportAddsUp) {
  const Match match = play(11, {"tag", "station", "random", "random"}, 200);
  const auto report = match_report(match);
  EXPECT_EQ(report["hands"], 200);
  double bb_sum = 0;
  std::int64_t chips = 0;
  for (const auto& row : report["standings"]) {
    bb_sum += row["bb_per_100"].get<double>();
    chips += row["net_chips"].get<std::int64_t>();
    EXPECT_GT(row["ci95"].get<double>(), 0);
  }
  EXPECT_EQ(chips, 0);
  EXPECT_NEAR(bb_sum, 0, 0.5);  // rounded to 0.1 each
  EXPECT_TRUE(report["llm"].empty());
  const std::string text = report_text(report);
  EXPECT_NE(text.find("bb/100"), std::string::npos);
  EXPECT_NE(text.find("station"), std::string::npos);
}

ModelSample answer(const char* mode, const Action& action) {
  ModelSample s;
  s.mode = mode;
  s.valid = true;
  s.action = action;
  return s;
}

// Plays as an LLM bot whose second mode answers some decisions otherwise in
// one of two ways: a raise of another size, or another kind of move; counts
// what the report should find.
struct TwoModePlayer : Player {
  std::string kind() const override { return "llm"; }
  Decision decide(const DecisionView& view) override {
    const LegalActions legal = view.hand.legal();
    Decision d;
    d.action = legal.can_check ? Action::check() : Action::call();
    ModelSample full = answer("full", d.action);
    if (legal.can_raise && legal.min_raise_to < legal.max_raise_to && decisions % 2 == 0) {
      d.action = Action::raise_to(legal.min_raise_to);
      full.action = Action::raise_to(legal.max_raise_to);
      ++same_kind;
    } else if (decisions % 3 == 0) {
      full.action = Action::fold();
    } else {
      ++same_kind;
      ++same;
    }
    ++decisions;
    d.samples = {answer("block", d.action), full};
    return d;
  }
  int decisions = 0, same = 0, same_kind = 0;
};

TEST(HoldemMatchTest, TheReportTellsRaiseSizesFromOtherMoves) {
  MatchParams params;
  params.table.seats = 3;
  params.hands = 40;
  params.seed = 4;
  auto scripted = std::make_unique<TwoModePlayer>();
  const TwoModePlayer* llm = scripted.get();
  std::vector<PlayerInfo> infos = default_players(3);
  std::vector<SeatedPlayer> seats;
  seats.push_back({infos[0], std::move(scripted)});
  for (std::size_t s = 1; s < 3; ++s) seats.push_back({infos[s], make_rule_player("tag", 40 + s)});
  Match match(params, std::move(seats));
  match.play();
  const auto full = match_report(match)["llm"][0]["modes"][1];
  ASSERT_EQ(full["mode"], "full");
  ASSERT_GT(llm->same_kind, llm->same) << "the script raised with another size at least once";
  const double n = llm->decisions;
  EXPECT_NEAR(full["agreement"].get<double>(), llm->same / n, 1e-4);
  EXPECT_NEAR(full["agreement_kind"].get<double>(), llm->same_kind / n, 1e-4);
}

}  // namespace
}  // namespace kvframe::examples::holdem
