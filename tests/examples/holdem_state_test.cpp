// The Hold'em sample state: the paper's Figure 5 shape, and its example pair
// diffing to exactly one block under the shipped rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "holdem/holdem_state.h"
#include "kvframe/json_blocker/json_blocker.h"

namespace kvframe::examples::holdem {
namespace {

namespace jb = kvframe::json_blocker;
using Json = nlohmann::ordered_json;

jb::Rules shipped_rules() {
  auto rules = jb::load_rules(KVFRAME_HOLDEM_RULES_FILE);
  EXPECT_TRUE(rules.ok()) << rules.error().to_string();
  return rules.ok() ? rules.value() : jb::Rules{};
}

std::vector<std::string> keys(const Json& object) {
  std::vector<std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) out.push_back(it.key());
  return out;
}

TEST(HoldemState, HasTheFigure5Shape) {
  HoldemParams params;
  params.players = 6;
  params.history = 12;
  const Json root = Json::parse(holdem_state(params));
  EXPECT_EQ(keys(root), (std::vector<std::string>{"state", "history", "opponent_stats"}));
  const Json& state = root["state"];
  EXPECT_EQ(keys(state), (std::vector<std::string>{"street", "board", "pot", "button", "to_act",
                                                   "chips", "players", "legal_actions"}));
  ASSERT_EQ(state["chips"].size(), 6u);
  for (int i = 1; i <= 6; ++i) {
    const Json& chips = state["chips"]["p" + std::to_string(i)];
    EXPECT_EQ(keys(chips), (std::vector<std::string>{"bet", "remain"}));
    EXPECT_EQ(chips["bet"].get<int>() % 10, 0);
  }
  ASSERT_EQ(state["players"].size(), 6u);
  EXPECT_EQ(state["players"][0]["id"], "p1");
  EXPECT_EQ(state["players"][0]["hole_cards"].size(), 2u);  // only the model's cards are seen
  EXPECT_TRUE(state["players"][1]["hole_cards"].empty());
  EXPECT_FALSE(state["legal_actions"].empty());
  EXPECT_EQ(root["history"].size(), 12u);
  EXPECT_EQ(keys(root["opponent_stats"]),
            (std::vector<std::string>{"p2", "p3", "p4", "p5", "p6"}));
}

TEST(HoldemState, IsDeterministicAndChecksItsParams) {
  HoldemParams a, b;
  b.seed = 2;
  EXPECT_EQ(holdem_state(a), holdem_state(a));
  EXPECT_NE(holdem_state(a), holdem_state(b));
  for (int players : {2, 9}) {
    a.players = players;
    EXPECT_EQ(Json::parse(holdem_state(a))["state"]["players"].size(), std::size_t(players));
  }
  for (int players : {1, 10}) {
    a.players = players;
    EXPECT_THROW(holdem_state(a), std::invalid_argument);
  }
}

TEST(HoldemState, Figure5PairChangesExactlyOneBlock) {
  const StatePair pair = figure5_pair();
  const Json previous = Json::parse(pair.previous), current = Json::parse(pair.current);
  EXPECT_EQ(previous["state"]["chips"]["p2"], Json({{"bet", 10}, {"remain", 990}}));
  EXPECT_EQ(current["state"]["chips"]["p2"], Json({{"bet", 50}, {"remain", 950}}));

  jb::FrameStream stream(shipped_rules());
  ASSERT_TRUE(stream.push_whole(pair.previous).ok());
  auto diff = stream.push_whole(pair.current);
  ASSERT_TRUE(diff.ok()) << diff.error().to_string();
  EXPECT_EQ(diff->changed, 1u);
  EXPECT_EQ(diff->added + diff->removed + diff->moved, 0u);
  for (const jb::BlockChange& change : diff->blocks) {
    if (change.change != jb::Change::kChanged) continue;
    const jb::Block& block = stream.current()[static_cast<std::size_t>(change.current)];
    EXPECT_EQ(block.id, "state.chips.p2");
    EXPECT_EQ(block.text, R"(state.chips.p2: {"bet":50,"remain":950})");
  }
}

TEST(HoldemState, ShippedRulesGiveEachPlayerTheirOwnBlocks) {
  HoldemParams params;
  params.players = 3;  // a short table: small containers still split by the pins
  auto partition = jb::partition(holdem_state(params), shipped_rules());
  ASSERT_TRUE(partition.ok()) << partition.error().to_string();
  std::vector<std::string> ids;
  for (const jb::Block& block : partition->blocks()) ids.emplace_back(block.id);
  for (const char* id : {"state.chips.p1", "state.chips.p2", "state.chips.p3",
                         "state.players[id=p1]", "opponent_stats.p2", "opponent_stats.p3"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  }
}

}  // namespace
}  // namespace kvframe::examples::holdem
