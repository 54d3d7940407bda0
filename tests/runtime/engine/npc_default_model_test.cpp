// NPC actions on the default model (SmolLM2-135M-Instruct, fp32 on CPU): on
// Hold'em states whose legal actions change every decision, every action is
// JSON that meets that decision's schema; and four NPCs batched on one frame
// decide exactly as they do alone.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "default_model.h"
#include "holdem/holdem_state.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::runtime {
namespace {

using nlohmann::json;

// The schema a Hold'em table would send: one branch per legal action, raise
// amounts within this decision's bounds.
std::string action_schema(const json& state) {
  json branches = json::array();
  for (const json& legal : state["state"]["legal_actions"]) {
    const std::string name = legal["action"];
    json branch = {{"type", "object"},
                   {"properties", {{"action", {{"const", name}}}}},
                   {"required", {"action"}},
                   {"additionalProperties", false}};
    if (name == "raise") {
      branch["properties"]["amount"] = {{"type", "integer"}, {"minimum", legal["min"]}, {"maximum", legal["max"]}};
      branch["required"].push_back("amount");
    }
    branches.push_back(branch);
  }
  return json{{"anyOf", branches}}.dump();
}

bool is_legal(const json& action, const json& state) {
  if (!action.is_object() || !action.contains("action")) return false;
  for (const json& legal : state["state"]["legal_actions"]) {
    if (legal["action"] != action["action"]) continue;
    if (legal["action"] != "raise") return action.size() == 1;
    const int64_t amount = action.value("amount", int64_t{-1});
    return action.size() == 2 && amount >= legal["min"].get<int64_t>() && amount <= legal["max"].get<int64_t>();
  }
  return false;
}

class DefaultModelNpc : public ::testing::Test {
 protected:
  void SetUp() override {
    KVFRAME_REQUIRE_DEFAULT_MODEL(path);
    auto loaded = Engine::load(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
    engine = std::move(loaded).value();
    SessionParams params;
    params.system_prompt = "You play p1 at a No-Limit Texas Hold'em table. Answer with your action as JSON.";
    params.context = 8192;
    auto opened = Session::open(*engine, params);
    ASSERT_TRUE(opened.ok()) << opened.error().to_string();
    session = std::move(opened).value();
  }

  std::unique_ptr<Engine> engine;
  std::unique_ptr<Session> session;
};

TEST_F(DefaultModelNpc, HoldemActionsAreLegalOnEveryDecision) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const std::string frame = examples::holdem::holdem_state({seed, 6, 8});
    const json state = json::parse(frame);
    ASSERT_TRUE(session->update(frame).ok());
    Task task;
    task.instruction = "\nIt is your turn. Choose one of your legal actions.";
    task.output_schema = action_schema(state);
    task.generate.max_tokens = 32;
    auto answer = session->query(task);
    ASSERT_TRUE(answer.ok()) << answer.error().to_string();
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + answer->text);
    EXPECT_EQ(answer->stop, StopReason::kComplete);
    EXPECT_TRUE(is_legal(json::parse(answer->text, nullptr, false), state));
  }
}

TEST_F(DefaultModelNpc, FourNpcsBatchedDecideAsTheyDoAlone) {
  const std::string frame = examples::holdem::holdem_state({5, 6, 8});
  const json state = json::parse(frame);
  ASSERT_TRUE(session->update(frame).ok());
  std::vector<Task> tasks(4);
  const char* styles[] = {"tight", "loose", "aggressive", "cautious"};
  for (size_t i = 0; i < tasks.size(); ++i) {
    tasks[i].instruction = std::string("\nPlay a ") + styles[i] + " game. Choose one of your legal actions.";
    tasks[i].output_schema = action_schema(state);
    tasks[i].generate.max_tokens = 32;
  }
  tasks[3].output_schema.clear();  // one commentator among them: free text
  tasks[3].generate.max_tokens = 16;
  auto batched = session->query_batch(tasks);
  ASSERT_EQ(batched.size(), tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto alone = session->query(tasks[i]);
    ASSERT_TRUE(alone.ok() && batched[i].ok());
    if (!tasks[i].output_schema.empty()) {
      EXPECT_EQ(batched[i]->text, alone->text) << "task " << i;
      EXPECT_EQ(batched[i]->tokens, alone->tokens) << "task " << i;
      continue;
    }
    // The final blocks run the same attention alone as batched (bit for bit,
    // cpu_attention_test), so the first token is the same. The decoding
    // steps after it do not: alone they run on the CPU step kernels (fp32
    // activations), batched through libtorch (the model's dtype), so a free
    // text may part at a near tie later on; the decisions above may not.
    ASSERT_FALSE(alone->tokens.empty());
    ASSERT_FALSE(batched[i]->tokens.empty());
    EXPECT_EQ(batched[i]->tokens.front(), alone->tokens.front()) << "task " << i;
  }
}

}  // namespace
}  // namespace kvframe::runtime
