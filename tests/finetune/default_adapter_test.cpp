// The adapters kvframe ships for its default model (models/, label model):
// the block-tuned one, Hold'em's and MOBA's are found with the default model,
// fit the commit limit, load as query-scope adapters; on Hold'em decisions of
// a match no training data came from, block and full mode answer with the
// same legal actions far more often than the untuned model's 29-32%, and on
// MOBA frames of a match no training frame came from block mode's first
// token is full mode's, in both block orders.
#include <gtest/gtest.h>

#include <filesystem>

#include "default_model.h"
#include "holdem/gamecore.h"
#include "holdem/players.h"
#include "holdem/simulator/dataset.h"
#include "holdem/simulator/match.h"
#include "kvframe/finetune/dataset.h"
#include "kvframe/finetune/evaluate.h"
#include "kvframe/default_model/default_model.h"
#include "kvframe/json_blocker/json_blocker.h"
#include "kvframe/runtime_engine/session.h"
#include "moba/moba_stream.h"

namespace kvframe::finetune {
namespace {

namespace fs = std::filesystem;
namespace hd = examples::holdem;
namespace rt = runtime;

void expect_loads_as_query_adapter(const std::string& model, const std::string& adapter) {
  EXPECT_LE(fs::file_size(adapter), 10u << 20) << "adapters are committed: at most 10 MiB";
  rt::ModelParams params;
  params.lora = adapter;
  auto engine = rt::Engine::load(model, params);
  ASSERT_TRUE(engine.ok()) << engine.error().to_string();
  ASSERT_NE((*engine)->model().adapter(), nullptr);
  EXPECT_EQ((*engine)->model().adapter()->params().scope, rt::LoraScope::kQuery);
}

TEST(DefaultAdapter, ShipsWithTheDefaultModelAndLoads) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  const std::string adapter = rt::resolve_lora("auto", model);
  ASSERT_EQ(adapter, rt::default_lora_path()) << "the shipped adapter is missing from models/";
  EXPECT_EQ(rt::resolve_lora("none", model), "");
  EXPECT_EQ(rt::resolve_lora("auto", "/elsewhere/other-model.gguf"), "");
  expect_loads_as_query_adapter(model, adapter);
}

void expect_game_ships_its_adapter(const std::string& model, const std::string& game) {
  const auto shipped = rt::shipped_adapters(model);
  ASSERT_EQ(shipped.count(game), 1u) << "models/ has no adapter for " << game;
  const std::string adapter = rt::resolve_lora("auto", model, game);
  EXPECT_EQ(adapter, shipped.at(game));
  EXPECT_EQ(rt::resolve_lora("auto", model, "no-such-game"), rt::default_lora_path());
  expect_loads_as_query_adapter(model, adapter);
}

TEST(DefaultAdapter, HoldemShipsItsOwnAdapter) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  expect_game_ships_its_adapter(model, "holdem");
}

TEST(DefaultAdapter, MobaShipsItsOwnAdapter) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  expect_game_ships_its_adapter(model, "moba");
}

// The first decisions of a held-out match (seed 2101; the block-tuned
// adapter trained on 1001-1012, Hold'em's on 1101-1140), short enough for CI.
std::vector<Example> held_out_decisions(const std::string& folder, size_t count, int history_hands) {
  const std::string path = folder + "/decisions.jsonl";
  std::string error;
  auto writer = hd::DatasetWriter::open(path, 2101, &error);
  EXPECT_TRUE(writer) << error;
  std::vector<hd::SeatedPlayer> seats;
  const std::vector<hd::PlayerInfo> infos = hd::default_players(4);
  const char* kinds[] = {"tag", "tag", "station", "random"};
  for (int s = 0; s < 4; ++s) seats.push_back({infos[static_cast<size_t>(s)], hd::make_rule_player(kinds[s], 2101 * 1000 + s)});
  hd::MatchParams params;
  params.table.seats = 4;
  params.hands = 2;
  params.seed = 2101;
  params.history_hands = history_hands;
  hd::Match match(params, std::move(seats));
  hd::MatchObserver observer;
  observer.on_turn = [&](const hd::DecisionView& view) { writer->decision(view, infos); };
  match.play(observer);
  writer.reset();
  auto examples = read_examples(path);
  EXPECT_TRUE(examples.ok());
  std::vector<Example> out = std::move(examples).value();
  if (out.size() > count) out.resize(count);
  return out;
}

// Block and full mode give the same action on at least 6 of a held-out
// match's first 8 decisions, with the game's adapter (none: the
// block-tuned one) and the history it was trained on.
void expect_modes_mostly_agree(const std::string& model, const std::string& game, int history_hands) {
  const fs::path folder = fs::path(::testing::TempDir()) / ("kvframe_default_adapter_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const std::vector<Example> decisions = held_out_decisions(folder.string(), 8, history_hands);
  ASSERT_EQ(decisions.size(), 8u);
  rt::ModelParams params;
  params.lora = rt::resolve_lora("auto", model, game);
  auto engine = rt::Engine::load(model, params);
  ASSERT_TRUE(engine.ok()) << engine.error().to_string();
  auto report = evaluate(**engine, decisions, {});
  fs::remove_all(folder);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  for (const EvalRecord& r : report->records) {
    for (const ModeAnswer& a : r.modes) EXPECT_FALSE(a.text.empty()) << r.id;
  }
  const ModeSummary& block = report->modes[1];
  EXPECT_GE(block.agree, 6) << "block mode gave full mode's action on " << block.agree << " of 8 decisions";
}

TEST(DefaultAdapter, BlockAndFullMostlyAgreeOnHeldOutDecisions) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  expect_modes_mostly_agree(model, "", 30);
}

TEST(DefaultAdapter, TheHoldemAdapterKeepsBlockAndFullTogether) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  expect_modes_mostly_agree(model, "holdem", 2);
}

// Trained on frames of 2 to 30 hands of history: it holds at the longer
// frames a game keeps too.
TEST(DefaultAdapter, TheHoldemAdapterHoldsAtTenHandsOfHistory) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  expect_modes_mostly_agree(model, "holdem", 10);
}

// Every 10th frame of a match of generator seed 1 (the MOBA adapter trained
// on seeds 11-16, 21-24 and 31-33 and held out 25 and 37), of the ~4.5K
// tokens of its shortest training frames (population 0.01), asked what
// kvframe-stream's records ask, read in the given block order.
std::vector<Example> held_out_moba_frames(int count, json_blocker::BlockOrder order) {
  namespace moba = examples::moba;
  auto rules = json_blocker::load_rules(KVFRAME_MOBA_RULES_FILE);
  EXPECT_TRUE(rules.ok()) << rules.error().to_string();
  rules->order = order;
  const auto shared_rules = std::make_shared<const json_blocker::Rules>(std::move(rules).value());
  moba::StreamGenerator generator(moba::scaled_params(0.01, 1, 0.02));
  std::vector<Example> out;
  for (int n = 0; static_cast<int>(out.size()) < count; ++n) {
    moba::Frame frame = generator.next();
    if (n % 10 != 0) continue;
    Example e;
    e.id = "moba-s1-f" + std::to_string(n);
    e.frame = std::move(frame.json);
    e.instruction = moba::kCasterInstruction;
    e.rules = shared_rules;
    out.push_back(std::move(e));
  }
  return out;
}

// The adapter trained in both orders: a session's rules choose the order.
class TheMobaAdapter : public ::testing::TestWithParam<json_blocker::BlockOrder> {};

TEST_P(TheMobaAdapter, KeepsBlockOnFullsFirstToken) {
  KVFRAME_REQUIRE_DEFAULT_MODEL(model);
  rt::ModelParams params;
  params.lora = rt::resolve_lora("auto", model, "moba");
  auto engine = rt::Engine::load(model, params);
  ASSERT_TRUE(engine.ok()) << engine.error().to_string();
  EvalParams eval;
  eval.max_tokens = 4;
  auto report = evaluate(**engine, held_out_moba_frames(2, GetParam()), eval);
  ASSERT_TRUE(report.ok()) << report.error().to_string();
  const ModeSummary& block = report->modes[1];
  EXPECT_EQ(block.first_token_agree, 2) << "block mode's first token was full mode's on " << block.first_token_agree
                                        << " of 2 frames";
  EXPECT_LE(block.kl_mean, 0.1) << "mean KL(full || block) of the first token, nats";
}

INSTANTIATE_TEST_SUITE_P(BothOrders, TheMobaAdapter,
                         ::testing::Values(json_blocker::BlockOrder::kDocument,
                                           json_blocker::BlockOrder::kVolatileLast),
                         [](const auto& order) { return std::string(json_blocker::block_order_name(order.param)); });

}  // namespace
}  // namespace kvframe::finetune
