// The Hold'em gamecore: Figure 5's shape built from real hands, the action
// schema and its parser agreeing with the rules engine, the shipped block
// rules, the block story of a long match (hundreds of blocks, a handful
// changing between decisions) and the match statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "holdem/gamecore.h"
#include "holdem/players.h"
#include "holdem/raise_sizes.h"
#include "kvframe/json_blocker/json_blocker.h"

namespace kvframe::examples::holdem {
namespace {

namespace jb = kvframe::json_blocker;
using Json = nlohmann::ordered_json;

constexpr std::int64_t kStack = 1000;  // 100 big blinds at 5/10

std::vector<std::string> keys(const Json& object) {
  std::vector<std::string> out;
  for (auto it = object.begin(); it != object.end(); ++it) out.push_back(it.key());
  return out;
}

std::vector<std::unique_ptr<Player>> mixed_bots(int seats, std::uint64_t seed) {
  const char* const kinds[] = {"tag", "random", "station"};
  std::vector<std::unique_ptr<Player>> bots;
  for (int i = 0; i < seats; ++i) {
    const std::string kind = kinds[i % 3];
    bots.push_back(kind == "tag" ? std::make_unique<TightAggressive>(seed + static_cast<std::uint64_t>(i),
                                                                     TightAggressive::Params{100})
                                 : make_rule_player(kind, seed + static_cast<std::uint64_t>(i)));
  }
  return bots;
}

// A match of rule bots, stacks reset every hand. `at_decision` sees every
// decision before it is played; the hand is recorded in `memory` when over.
template <class AtDecision>
void play_match(int seats, int hands, std::uint64_t seed, MatchMemory& memory, AtDecision at_decision) {
  TableConfig config;
  config.seats = seats;
  auto bots = mixed_bots(seats, seed);
  DeterministicRng deck_rng(seed);
  for (int n = 1; n <= hands; ++n) {
    const auto number = static_cast<std::uint64_t>(n);
    Hand hand(config, (n - 1) % seats, std::vector<std::int64_t>(static_cast<std::size_t>(seats), kStack),
              Deck(deck_rng));
    while (!hand.over()) {
      at_decision(hand, number);
      const int seat = hand.to_act();
      const Decision decision = bots[static_cast<std::size_t>(seat)]->decide({hand, seat, memory, number});
      hand.apply(decision.action);
    }
    memory.record(hand, number);
  }
}

// --- Figure 5's shape ------------------------------------------------------

void expect_figure5_shape(const Hand& hand, const Json& root, const MatchMemory& memory) {
  const int viewer = hand.to_act();
  ASSERT_EQ(keys(root), (std::vector<std::string>{"state", "history", "opponent_stats", "your_read"}));
  const Json& state = root["state"];
  ASSERT_EQ(keys(state), (std::vector<std::string>{"hand", "street", "pot", "button", "to_act", "board", "chips",
                                                   "players", "actions", "legal_actions"}));
  EXPECT_EQ(state["street"], street_name(hand.street()));
  EXPECT_EQ(state["board"].get<std::vector<std::string>>(), card_names(hand.board()));
  EXPECT_EQ(state["pot"], hand.pot());
  EXPECT_EQ(state["to_act"], "p" + std::to_string(viewer + 1));
  const std::size_t seats = hand.seats().size();
  ASSERT_EQ(state["chips"].size(), seats);
  ASSERT_EQ(state["players"].size(), seats);
  std::multiset<std::string> positions;
  for (std::size_t i = 0; i < seats; ++i) {
    const std::string id = "p" + std::to_string(i + 1);
    const SeatState& seat = hand.seats()[i];
    EXPECT_EQ(state["chips"][id], Json({{"bet", seat.bet}, {"remain", seat.stack}})) << id;
    const Json& player = state["players"][i];
    EXPECT_EQ(keys(player), (std::vector<std::string>{"id", "seat", "name", "position", "status", "hole_cards"}));
    EXPECT_EQ(player["id"], id);
    EXPECT_EQ(player["seat"], i + 1);
    EXPECT_EQ(player["name"], memory.players()[i].name);
    EXPECT_EQ(player["status"], seat.folded ? "folded" : seat.all_in ? "all_in" : "active");
    positions.insert(player["position"].get<std::string>());
    // Only the viewer's cards: the others' would leak into its prompt.
    if (static_cast<int>(i) == viewer) {
      EXPECT_EQ(player["hole_cards"].get<std::vector<std::string>>(), card_names(seat.hole));
    } else {
      EXPECT_TRUE(player["hole_cards"].empty()) << id;
    }
  }
  EXPECT_EQ(positions.count("BTN"), 1u);
  EXPECT_EQ(positions.count("BB"), 1u);
  EXPECT_EQ(positions.count("SB"), seats == 2 ? 0u : 1u);

  const LegalActions legal = hand.legal();
  Json expected = Json::array({{{"action", "fold"}}});
  expected.push_back(legal.can_check ? Json{{"action", "check"}}
                                     : Json{{"action", "call"}, {"amount", legal.call_amount}});
  if (legal.can_raise) {
    expected.push_back({{"action", "raise"}, {"min", legal.min_raise_to}, {"max", legal.max_raise_to}});
  }
  EXPECT_EQ(state["legal_actions"], expected);

  // The blinds open the action lines; every logged action has its line.
  const Json& actions = state["actions"];
  ASSERT_GE(actions.size(), hand.log().size());
  EXPECT_EQ(actions[0],
            action_line(memory.players()[static_cast<std::size_t>(hand.small_blind_seat())], hand.log()[0]));
  EXPECT_EQ(actions[1], action_line(memory.players()[static_cast<std::size_t>(hand.big_blind_seat())], hand.log()[1]));
  EXPECT_EQ(actions.size() - hand.log().size(), hand.board().empty() ? 0u : hand.board().size() - 2)
      << "one street marker per street dealt";
  const std::vector<std::string> board = card_names(hand.board());
  const std::vector<std::string> markers = {
      "flop " + (board.size() >= 3 ? board[0] + " " + board[1] + " " + board[2] : ""),
      "turn " + (board.size() >= 4 ? board[3] : ""), "river " + (board.size() >= 5 ? board[4] : "")};
  std::size_t marked = 0;
  for (const Json& line : actions) {
    if (std::find(markers.begin(), markers.end(), line) != markers.end()) ++marked;
  }
  EXPECT_EQ(marked, actions.size() - hand.log().size()) << actions.dump();

  const std::string viewer_id = "p" + std::to_string(viewer + 1);
  EXPECT_FALSE(root["opponent_stats"].contains(viewer_id));
  EXPECT_EQ(root["opponent_stats"].size(), seats - 1);

  // The viewer's own read (holdem_seat_read_test checks what it says).
  EXPECT_EQ(keys(root["your_read"]),
            (std::vector<std::string>{"hand", "equity_pct", "opponents", "to_call", "pot_odds_pct", "call_edge_pct",
                                      "spr"}));
  EXPECT_EQ(root["your_read"]["to_call"], legal.call_amount);
}

TEST(HoldemGamecore, HasTheFigure5ShapeAtEveryDecision) {
  for (int seats : {2, 3, 6, 9}) {
    MatchMemory memory(default_players(seats), 5);
    int decisions = 0;
    play_match(seats, 40, 7, memory, [&](const Hand& hand, std::uint64_t number) {
      const Json root = Json::parse(gamecore_json(hand, hand.to_act(), memory, number));
      EXPECT_EQ(root["state"]["hand"], hand_id(number));
      expect_figure5_shape(hand, root, memory);
      // Another seat watching the same moment: its cards, no legal actions.
      const int watcher = (hand.to_act() + 1) % seats;
      const Json watched = Json::parse(gamecore_json(hand, watcher, memory, number));
      EXPECT_TRUE(watched["state"]["legal_actions"].empty());
      EXPECT_TRUE(watched["your_read"].empty());
      EXPECT_EQ(watched["state"]["players"][static_cast<std::size_t>(watcher)]["hole_cards"].size(), 2u);
      EXPECT_TRUE(watched["state"]["players"][static_cast<std::size_t>(hand.to_act())]["hole_cards"].empty());
      ++decisions;
    });
    EXPECT_GT(decisions, 40) << seats << " seats";
    EXPECT_EQ(Json::parse(memory.history_json()).size(), 5u);
  }
}

TEST(HoldemGamecore, IsDeterministicMinifiedJson) {
  std::vector<std::string> first, second;
  for (auto* out : {&first, &second}) {
    MatchMemory memory(default_players(4), 10);
    play_match(4, 20, 3, memory, [&](const Hand& hand, std::uint64_t number) {
      out->push_back(gamecore_json(hand, hand.to_act(), memory, number));
    });
  }
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.back(), Json::parse(first.back()).dump());  // minified: what dump() writes
}

TEST(HoldemGamecore, FinishedHandHasNoLegalActions) {
  MatchMemory memory(default_players(3), 5);
  TableConfig config;
  config.seats = 3;
  DeterministicRng rng(11);
  Hand hand(config, 0, {kStack, kStack, kStack}, Deck(rng));
  while (!hand.over()) hand.apply(Action::fold());
  const Json root = Json::parse(gamecore_json(hand, 2, memory, 1));
  EXPECT_TRUE(root["state"]["to_act"].is_null());
  EXPECT_TRUE(root["state"]["legal_actions"].empty());
  EXPECT_TRUE(root["your_read"].empty());
  EXPECT_EQ(root["state"]["players"][2]["hole_cards"].size(), 2u);
  EXPECT_THROW(gamecore_json(hand, 3, memory, 1), std::invalid_argument);
  EXPECT_THROW(gamecore_json(hand, 0, MatchMemory(default_players(4), 5), 1), std::invalid_argument);
}

TEST(HoldemGamecore, NamesPositionsAndSeatsSittingOut) {
  TableConfig config;
  config.seats = 6;
  DeterministicRng rng(2);
  const auto positions = [](const Hand& hand) {
    const MatchMemory memory(default_players(hand.config().seats), 0);
    const Json root = Json::parse(gamecore_json(hand, hand.to_act(), memory, 1));
    std::vector<std::string> names;
    for (const Json& player : root["state"]["players"]) {
      names.push_back(player["position"]);
    }
    return names;
  };
  const std::vector<std::int64_t> full(6, kStack);
  EXPECT_EQ(positions(Hand(config, 2, full, Deck(rng))),
            (std::vector<std::string>{"HJ", "CO", "BTN", "SB", "BB", "UTG"}));
  config.seats = 9;
  EXPECT_EQ(positions(Hand(config, 0, std::vector<std::int64_t>(9, kStack), Deck(rng))),
            (std::vector<std::string>{"BTN", "SB", "BB", "UTG", "UTG+1", "MP", "LJ", "HJ", "CO"}));
  config.seats = 2;
  EXPECT_EQ(positions(Hand(config, 1, {kStack, kStack}, Deck(rng))), (std::vector<std::string>{"BB", "BTN"}));

  // p1 (the button), p3 and p6 have no chips: they sit out, the button is dead.
  config.seats = 6;
  const Hand hand(config, 0, {0, kStack, 0, kStack, kStack, 0}, Deck(rng));
  const Json state = Json::parse(gamecore_json(hand, hand.to_act(), MatchMemory(default_players(6), 0), 1))["state"];
  EXPECT_EQ(positions(hand), (std::vector<std::string>{"", "SB", "", "BB", "BTN", ""}));
  for (int out : {0, 2, 5}) {
    const Json& player = state["players"][static_cast<std::size_t>(out)];
    EXPECT_EQ(player["status"], "out");
    EXPECT_TRUE(player["hole_cards"].empty());
    EXPECT_EQ(state["chips"][player["id"].get<std::string>()], Json({{"bet", 0}, {"remain", 0}}));
  }
  EXPECT_EQ(state["button"], "p1");
}

TEST(HoldemGamecore, NamesPlayersHandsAndActions) {
  const std::vector<PlayerInfo> players = default_players(9);
  EXPECT_EQ(players[0].id, "p1");
  EXPECT_EQ(players[0].name, "Ada");
  EXPECT_EQ(players[8].id, "p9");
  EXPECT_EQ(players[8].name, "Ivo");
  EXPECT_THROW(default_players(1), std::invalid_argument);
  EXPECT_THROW(default_players(10), std::invalid_argument);
  EXPECT_EQ(hand_id(42), "hand_0042");
  EXPECT_EQ(hand_id(12345), "hand_12345");

  const auto line = [&](int seat, ActionKind kind, std::int64_t added, std::int64_t bet_to, bool all_in) {
    return action_line(players[static_cast<std::size_t>(seat)], {seat, Street::kFlop, kind, added, bet_to, all_in});
  };
  EXPECT_EQ(line(3, ActionKind::kRaise, 25, 30, false), "p4 raise 30");
  EXPECT_EQ(line(0, ActionKind::kCall, 20, 30, false), "p1 call 20");
  EXPECT_EQ(line(1, ActionKind::kSmallBlind, 5, 5, false), "p2 small_blind 5");
  EXPECT_EQ(line(2, ActionKind::kBigBlind, 10, 10, false), "p3 big_blind 10");
  EXPECT_EQ(line(0, ActionKind::kFold, 0, 0, false), "p1 fold");
  EXPECT_EQ(line(2, ActionKind::kCheck, 0, 0, false), "p3 check");
  EXPECT_EQ(line(3, ActionKind::kRaise, 980, 990, true), "p4 raise 990 (all in)");
}

// --- the action schema -----------------------------------------------------

// The JSON Schema keywords runtime/output serves, all the schema may use.
const std::set<std::string> kServedKeywords = {
    "type", "properties", "required", "additionalProperties", "enum", "const", "minimum", "maximum", "anyOf"};

void expect_served_subset(const Json& schema) {
  ASSERT_TRUE(schema.is_object());
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    EXPECT_TRUE(kServedKeywords.count(it.key())) << it.key();
  }
  if (schema.contains("anyOf")) {
    for (const Json& branch : schema["anyOf"]) expect_served_subset(branch);
  }
  if (schema.contains("properties")) {
    for (auto it = schema["properties"].begin(); it != schema["properties"].end(); ++it) expect_served_subset(*it);
  }
}

bool is_whole(const Json& value) {
  return value.is_number_integer() ||
         (value.is_number_float() && value.get<double>() == std::floor(value.get<double>()));
}

// A reference validator for that subset, written from the JSON Schema spec.
bool valid(const Json& schema, const Json& value) {
  if (schema.contains("anyOf")) {
    return std::any_of(schema["anyOf"].begin(), schema["anyOf"].end(),
                       [&](const Json& branch) { return valid(branch, value); });
  }
  if (schema.contains("type")) {
    const std::string type = schema["type"];
    if (type == "object" && !value.is_object()) return false;
    if (type == "integer" && !is_whole(value)) return false;
  }
  if (schema.contains("const") && value != schema["const"]) return false;
  if (schema.contains("enum") &&
      std::find(schema["enum"].begin(), schema["enum"].end(), value) == schema["enum"].end()) {
    return false;
  }
  if (schema.contains("minimum") && value.is_number() && value.get<double>() < schema["minimum"].get<double>())
    return false;
  if (schema.contains("maximum") && value.is_number() && value.get<double>() > schema["maximum"].get<double>())
    return false;
  if (!value.is_object()) return true;
  for (const Json& name : schema.value("required", Json::array())) {
    if (!value.contains(name.get<std::string>())) return false;
  }
  const Json properties = schema.value("properties", Json::object());
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (!properties.contains(it.key())) {
      if (schema.value("additionalProperties", true) == false) return false;
      continue;
    }
    if (!valid(properties[it.key()], *it)) return false;
  }
  return true;
}

// Answers a model could write: every action, good and bad amounts, extra
// keys, wrong types, not JSON at all.
std::vector<std::string> candidate_answers(const LegalActions& legal, const std::vector<std::int64_t>& offered) {
  const std::int64_t lo = legal.min_raise_to, hi = legal.max_raise_to, mid = (lo + hi) / 2;
  std::vector<std::string> answers = {R"({"action":"fold"})",
                                      R"({"action":"check"})",
                                      R"({"action":"call"})",
                                      R"({"action":"call","amount":)" + std::to_string(legal.call_amount) + "}",
                                      R"({"action":"fold","reason":"bluff"})",
                                      R"({"action":"raise"})",
                                      R"({"action":"bet","amount":50})",
                                      R"({"action":"FOLD"})",
                                      R"({"action":1})",
                                      R"({})",
                                      R"([])",
                                      R"("fold")",
                                      "42",
                                      "",
                                      "fold",
                                      "{",
                                      R"({"action":"fold"} trailing)",
                                      R"({"action":"raise","amount":"100"})",
                                      R"({"amount":100})"};
  std::vector<std::int64_t> amounts = {lo - 1, lo, mid, hi, hi + 1, std::int64_t{0}, std::int64_t{-5}};
  for (std::int64_t amount : offered) {  // each offered raise and the chips beside it
    amounts.insert(amounts.end(), {amount - 1, amount, amount + 1});
  }
  for (std::int64_t amount : amounts) {
    answers.push_back(R"({"action":"raise","amount":)" + std::to_string(amount) + "}");
  }
  answers.push_back(R"({"amount":)" + std::to_string(mid) + R"(,"action":"raise"})");  // key order is free
  answers.push_back(R"({"action":"raise","amount":)" + std::to_string(mid) + ".0}");   // 30.0 is an integer
  answers.push_back(R"({"action":"raise","amount":)" + std::to_string(mid) + ".5}");
  answers.push_back(R"({"action":"raise","amount":)" + std::to_string(mid) + R"(,"x":1})");
  answers.push_back(R"({"action":"raise","amount":99999999999999999999})");
  return answers;
}

void expect_schema_and_parser_agree(const LegalActions& legal, const Hand* hand,
                                    const std::vector<std::int64_t>& offered = {}) {
  const std::string schema_text = action_schema_json(legal, offered);
  const Json schema = Json::parse(schema_text, nullptr, false);
  ASSERT_FALSE(schema.is_discarded()) << schema_text;
  expect_served_subset(schema);
  for (const std::string& answer : candidate_answers(legal, offered)) {
    const Json value = Json::parse(answer, nullptr, false);
    const bool schema_accepts = !value.is_discarded() && valid(schema, value);
    const std::optional<Action> action = action_from_json(answer, legal, offered);
    EXPECT_EQ(action.has_value(), schema_accepts) << answer << " under " << schema_text;
    if (action && hand) {
      EXPECT_EQ(hand->check(*action), "") << answer;
    }
    if (action && action->kind == ActionKind::kRaise) {
      EXPECT_EQ(action->amount, value["amount"].get<double>()) << answer;
    }
  }
}

TEST(HoldemGamecore, ActionSchemaMatchesTheParser) {
  LegalActions facing_bet;
  facing_bet.call_amount = 20;
  facing_bet.can_raise = true;
  facing_bet.min_raise_to = 50;
  facing_bet.max_raise_to = 990;
  LegalActions checked_to;
  checked_to.can_check = true;
  checked_to.can_raise = true;
  checked_to.min_raise_to = 10;
  checked_to.max_raise_to = 1000;
  LegalActions only_call;  // the others are all in
  only_call.call_amount = 300;
  LegalActions all_in_only;  // the stack is below a full raise
  all_in_only.call_amount = 40;
  all_in_only.can_raise = true;
  all_in_only.min_raise_to = all_in_only.max_raise_to = 75;
  for (const LegalActions& legal : {facing_bet, checked_to, only_call, all_in_only}) {
    expect_schema_and_parser_agree(legal, nullptr);
  }

  const Json schema = Json::parse(action_schema_json(facing_bet));
  ASSERT_EQ(schema["anyOf"].size(), 3u);
  EXPECT_EQ(schema["anyOf"][2]["properties"]["amount"], Json({{"type", "integer"}, {"minimum", 50}, {"maximum", 990}}));
  EXPECT_EQ(Json::parse(action_schema_json(only_call))["anyOf"].size(), 2u);

  const auto parsed = action_from_json(R"({"action":"raise","amount":500})", facing_bet);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->kind, ActionKind::kRaise);
  EXPECT_EQ(parsed->amount, 500);
  EXPECT_EQ(action_from_json(R"({"action":"call"})", facing_bet)->kind, ActionKind::kCall);
  EXPECT_FALSE(action_from_json(R"({"action":"check"})", facing_bet));
  EXPECT_FALSE(action_from_json(R"({"action":"raise","amount":49})", facing_bet));
  EXPECT_FALSE(action_from_json(R"({"action":"raise","amount":991})", facing_bet));
  EXPECT_FALSE(action_from_json(R"({"action":"fold","extra":true})", facing_bet));
  EXPECT_FALSE(action_from_json("not json", facing_bet));

  // Offered raise sizes: those amounts and no others.
  const std::vector<std::int64_t> offered = {60, 130, 990};
  expect_schema_and_parser_agree(facing_bet, nullptr, offered);
  EXPECT_EQ(Json::parse(action_schema_json(facing_bet, offered))["anyOf"][2]["properties"]["amount"],
            Json({{"type", "integer"}, {"enum", offered}}));
  EXPECT_EQ(action_from_json(R"({"action":"raise","amount":130})", facing_bet, offered)->amount, 130);
  EXPECT_FALSE(action_from_json(R"({"action":"raise","amount":500})", facing_bet, offered));
}

TEST(HoldemGamecore, ParsedActionsAreExactlyWhatTheTableAllows) {
  MatchMemory memory(default_players(6), 0);
  int decisions = 0;
  play_match(6, 40, 21, memory, [&](const Hand& hand, std::uint64_t) {
    expect_schema_and_parser_agree(hand.legal(), &hand);
    expect_schema_and_parser_agree(hand.legal(), &hand, raise_amounts(raise_menu(hand)));
    ++decisions;
  });
  EXPECT_GT(decisions, 200);
}

// --- the rules -------------------------------------------------------------

TEST(HoldemGamecore, EmbeddedRulesAreTheShippedFile) {
  std::ifstream file(KVFRAME_SOURCE_DIR "/examples/holdem/holdem.rules.json");
  ASSERT_TRUE(file) << "cannot read holdem.rules.json";
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_EQ(Json::parse(holdem_rules_json()), Json::parse(text.str()));
  EXPECT_TRUE(jb::parse_rules(holdem_rules_json()).ok());
}

// --- the block story of a long match ---------------------------------------

struct Distribution {
  std::vector<std::size_t> values;
  std::size_t at(double quantile) const {
    std::vector<std::size_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(quantile * static_cast<double>(sorted.size())))];
  }
  std::string summary() const {
    std::map<std::size_t, std::size_t> histogram;
    for (std::size_t v : values) ++histogram[v];
    std::string text = "n=" + std::to_string(values.size()) + " median=" + std::to_string(at(0.5)) +
                       " p90=" + std::to_string(at(0.9)) + " max=" + std::to_string(at(1.0)) + " histogram:";
    for (const auto& [v, count] : histogram) text += " " + std::to_string(v) + ":" + std::to_string(count);
    return text;
  }
};

// A frame's blocks and the hand it belongs to (0: no frame yet).
struct Frame {
  jb::Partition blocks;
  std::uint64_t hand = 0;
};

// Blocks to encode or drop between two frames of one hand.
std::size_t touched(const jb::FrameDiff& diff) { return diff.changed + diff.added + diff.removed + diff.moved; }

std::vector<std::string> touched_ids(const jb::FrameDiff& diff, const jb::Partition& previous,
                                     const jb::Partition& current) {
  std::vector<std::string> ids;
  for (const jb::BlockChange& change : diff.blocks) {
    if (change.change == jb::Change::kUnchanged) continue;
    const jb::Block& block = change.current >= 0 ? current[static_cast<std::size_t>(change.current)]
                                                 : previous[static_cast<std::size_t>(change.previous)];
    ids.emplace_back(block.id);
  }
  return ids;
}

TEST(HoldemGamecore, LongMatchHasHundredsOfBlocksAndFewChangePerDecision) {
  constexpr int kSeats = 6, kHands = 300, kHistory = 200;
  auto rules = jb::parse_rules(holdem_rules_json());
  ASSERT_TRUE(rules.ok()) << rules.error().to_string();
  jb::Partitioner partitioner(rules.value());
  MatchMemory memory(default_players(kSeats), kHistory);
  const auto partition = [&](const std::string& frame) {
    auto blocks = partitioner.partition(frame);
    EXPECT_TRUE(blocks.ok()) << blocks.error().to_string();
    return blocks.ok() ? std::move(blocks).value() : jb::Partition{};
  };

  // Three ways a game can feed the model, each a stream of frames:
  // - watching: p1's view at every decision at the table, as Figure 5's
  //   State N-1 -> N (one seat's cache kept current while the others act);
  // - own turns: each seat's view at its own decisions only;
  // - table order: every decision from its actor's view (the viewer, so the
  //   hole cards shown and the stats left out, change each time).
  Frame watched;
  std::vector<Frame> own_turns(kSeats);
  int last_actor = -1;
  Distribution watching, own, table, blocks_after_fill;
  std::size_t last_bytes = 0, history_bytes = 0, history_blocks = 0;
  std::set<std::string> changed_outside_state;

  play_match(kSeats, kHands, 5, memory, [&](const Hand& hand, std::uint64_t number) {
    const std::string frame = gamecore_json(hand, 0, memory, number);
    last_bytes = frame.size();
    jb::Partition blocks = partition(frame);
    if (number > kHistory) {
      blocks_after_fill.values.push_back(blocks.size());
      for (const jb::Block& block : blocks.blocks()) {
        if (block.id.substr(0, 8) != "history[") continue;
        history_bytes += block.text.size();
        ++history_blocks;
      }
    }
    if (watched.hand == number) {
      const jb::FrameDiff diff = jb::diff(watched.blocks, blocks);
      watching.values.push_back(touched(diff));
      for (const std::string& id : touched_ids(diff, watched.blocks, blocks)) {
        if (id.rfind("state.", 0) != 0 && id != "your_read") changed_outside_state.insert(id);
      }
    }
    watched = {std::move(blocks), number};

    const int actor = hand.to_act();
    jb::Partition actor_blocks = partition(gamecore_json(hand, actor, memory, number));
    const Frame& previous_decision = own_turns[static_cast<std::size_t>(std::max(last_actor, 0))];
    if (last_actor >= 0 && previous_decision.hand == number) {
      table.values.push_back(touched(jb::diff(previous_decision.blocks, actor_blocks)));
    }
    Frame& mine = own_turns[static_cast<std::size_t>(actor)];
    if (mine.hand == number) own.values.push_back(touched(jb::diff(mine.blocks, actor_blocks)));
    mine = {std::move(actor_blocks), number};
    last_actor = actor;
  });

  std::printf("blocks per frame after %d hands: %s\n", kHistory, blocks_after_fill.summary().c_str());
  std::printf("blocks touched between frames of a hand:\n  watching:    %s\n  own turns:   %s\n  table order: %s\n",
              watching.summary().c_str(), own.summary().c_str(), table.summary().c_str());
  std::printf("gamecore at hand %d: %zu bytes; a history block %.0f bytes on average\n", kHands, last_bytes,
              static_cast<double>(history_bytes) / static_cast<double>(history_blocks));

  EXPECT_GE(blocks_after_fill.at(0.0), 200u);
  // One action: the state's scalars, the actions, the actor's chips or
  // player entry, the legal actions and the read when the viewer's turn
  // comes or goes.
  EXPECT_LE(watching.at(0.5), 4u);
  // At most: a street dealt (board too) after every seat bet, each bet going
  // back to 0, by an action that also changed its player's status, and the
  // viewer's turn coming with it (legal actions and read).
  EXPECT_LE(watching.at(1.0), static_cast<std::size_t>(kSeats) + 6);
  // Within a hand, history and stats blocks stay put: only the state and
  // the viewer's read move.
  EXPECT_TRUE(changed_outside_state.empty()) << *changed_outside_state.begin();
}

TEST(HoldemGamecore, HistoryHandsAreSmallBlocks) {
  // Six tight-aggressive players, as a table of careful bots around one LLM
  // seat would be: most hands end preflop, a few reach a showdown.
  constexpr int kSeats = 6, kHands = 200;
  TableConfig config;
  config.seats = kSeats;
  MatchMemory memory(default_players(kSeats), kHands);
  std::vector<std::unique_ptr<Player>> bots;
  for (std::uint64_t i = 0; i < kSeats; ++i)
    bots.push_back(std::make_unique<TightAggressive>(i, TightAggressive::Params{100}));
  DeterministicRng deck_rng(4);
  for (std::uint64_t n = 1; n <= kHands; ++n) {
    Hand hand(config, static_cast<int>(n % kSeats), std::vector<std::int64_t>(kSeats, kStack), Deck(deck_rng));
    while (!hand.over())
      hand.apply(bots[static_cast<std::size_t>(hand.to_act())]->decide({hand, hand.to_act(), memory, n}).action);
    memory.record(hand, n);
  }
  std::size_t total = 0, largest = 0, showdowns = 0;
  for (const Json& entry : Json::parse(memory.history_json())) {
    const std::size_t bytes = entry.dump().size();
    total += bytes;
    largest = std::max(largest, bytes);
    showdowns += entry.contains("showdown");
  }
  std::printf("history hand JSON at a table of TAGs: %zu bytes on average, %zu at most; %zu showdowns in %d hands\n",
              total / kHands, largest, showdowns, kHands);
  // ~3 bytes a token: 40-80 tokens on average, a long showdown hand ~150.
  EXPECT_LE(total / kHands, 240u);
  EXPECT_LE(largest, 480u);
}

// --- statistics ------------------------------------------------------------

TEST(HoldemGamecore, RecordsOneHandExactly) {
  TableConfig config;
  config.seats = 3;
  MatchMemory memory(default_players(3), 5);
  DeterministicRng rng(12);
  Hand hand(config, 0, {kStack, kStack, kStack}, Deck(rng));  // p1 button, p2 small blind, p3 big blind
  const std::vector<std::pair<int, Action>> script = {
      {0, Action::raise_to(30)}, {1, Action::fold()},       {2, Action::call()},  // preflop
      {2, Action::check()},      {0, Action::raise_to(40)}, {2, Action::call()},  // flop
      {2, Action::check()},      {0, Action::check()},                            // turn
      {2, Action::check()},      {0, Action::check()}};                           // river
  for (const auto& [seat, action] : script) {
    ASSERT_EQ(hand.to_act(), seat);
    hand.apply(action);
  }
  ASSERT_TRUE(hand.over());
  memory.record(hand, 7);

  const Json entry = Json::parse(memory.history_json())[0];
  EXPECT_EQ(keys(entry), (std::vector<std::string>{"id", "button", "board", "actions", "pot", "winners", "showdown"}));
  EXPECT_EQ(entry["id"], "hand_0007");
  EXPECT_EQ(entry["button"], "p1");
  const auto spaced = [](const std::vector<Card>& cards) {
    std::string text;
    for (const std::string& card : card_names(cards)) text += (text.empty() ? "" : " ") + card;
    return text;
  };
  EXPECT_EQ(entry["board"], spaced(hand.board()));
  EXPECT_EQ(entry["actions"], Json({{"preflop", "p1 r30, p2 f, p3 c"},
                                    {"flop", "p3 x, p1 r40, p3 c"},
                                    {"turn", "checked"},
                                    {"river", "checked"}}));
  EXPECT_EQ(entry["pot"], 5 + 2 * 30 + 2 * 40);
  EXPECT_EQ(keys(entry["showdown"]), (std::vector<std::string>{"p1", "p3"}));
  EXPECT_EQ(entry["showdown"]["p1"], spaced(hand.seats()[0].hole) + ", " + describe(*hand.result().shown[0]));

  const Json stats = Json::parse(memory.opponent_stats_json(-1));
  const double p1_won = hand.result().net[0] > 0 ? 1.0 : 0.0;
  EXPECT_EQ(stats["p1"], Json({{"hands", 1},
                               {"vpip", 1.0},
                               {"pfr", 1.0},
                               {"aggression", 2.0},
                               {"wtsd", 1.0},
                               {"won_at_showdown", p1_won},
                               {"net_bb", static_cast<double>(hand.result().net[0]) / 10.0},
                               {"last_action", "check"}}));
  EXPECT_EQ(stats["p2"], Json({{"hands", 1},
                               {"vpip", 0.0},
                               {"pfr", 0.0},
                               {"aggression", 0.0},
                               {"wtsd", 0.0},
                               {"won_at_showdown", 0.0},
                               {"net_bb", -0.5},
                               {"last_action", "fold"}}));
  EXPECT_EQ(stats["p3"]["vpip"], 1.0);
  EXPECT_EQ(stats["p3"]["pfr"], 0.0);
  EXPECT_EQ(stats["p3"]["aggression"], 0.0);  // two calls, no raise
  EXPECT_EQ(stats["p3"]["wtsd"], 1.0);

  EXPECT_THROW(memory.record(Hand(config, 0, {kStack, kStack, kStack}, Deck(rng)), 8), std::invalid_argument);
}

TEST(HoldemGamecore, StatsAreRatesOverRecordedHands) {
  constexpr int kSeats = 6, kHands = 120;
  MatchMemory memory(default_players(kSeats), 100);
  EXPECT_EQ(memory.history_json(), "[]");
  play_match(kSeats, kHands, 9, memory, [](const Hand&, std::uint64_t) {});
  EXPECT_EQ(memory.hands_recorded(), static_cast<std::uint64_t>(kHands));

  const Json history = Json::parse(memory.history_json());
  ASSERT_EQ(history.size(), 100u);
  EXPECT_EQ(history.front()["id"], hand_id(kHands - 99));
  EXPECT_EQ(history.back()["id"], hand_id(kHands));
  for (const Json& hand : history) {
    EXPECT_FALSE(hand["winners"].empty()) << hand.dump();
    std::int64_t won = 0;
    for (const auto& [id, amount] : hand["winners"].items()) won += amount.get<std::int64_t>();
    EXPECT_EQ(won, hand["pot"].get<std::int64_t>()) << hand.dump();
  }

  const Json everyone = Json::parse(memory.opponent_stats_json(-1));  // not a seat: nobody left out
  ASSERT_EQ(everyone.size(), static_cast<std::size_t>(kSeats));
  EXPECT_EQ(keys(Json::parse(memory.opponent_stats_json(0))), (std::vector<std::string>{"p2", "p3", "p4", "p5", "p6"}));
  double net_bb = 0;
  for (const auto& [id, stats] : everyone.items()) {
    EXPECT_EQ(keys(stats), (std::vector<std::string>{"hands", "vpip", "pfr", "aggression", "wtsd", "won_at_showdown",
                                                     "net_bb", "last_action"}));
    EXPECT_EQ(stats["hands"], kHands) << id;
    for (const char* rate : {"vpip", "pfr", "wtsd", "won_at_showdown"}) {
      EXPECT_GE(stats[rate].get<double>(), 0.0) << id << " " << rate;
      EXPECT_LE(stats[rate].get<double>(), 1.0) << id << " " << rate;
    }
    EXPECT_LE(stats["pfr"].get<double>(), stats["vpip"].get<double>()) << id;
    EXPECT_NE(stats["last_action"], "") << id;
    net_bb += stats["net_bb"].get<double>();
  }
  EXPECT_NEAR(net_bb, 0.0, 1e-6);  // chips only change hands
  // mixed_bots seats a station at p3 and p6: it never raises, and calls much.
  for (const char* station : {"p3", "p6"}) {
    EXPECT_EQ(everyone[station]["pfr"], 0.0);
    EXPECT_EQ(everyone[station]["aggression"], 0.0);
    EXPECT_GT(everyone[station]["vpip"].get<double>(), 0.5);
  }
  EXPECT_LT(everyone["p1"]["vpip"].get<double>(), 0.4);  // the TAG
}

}  // namespace
}  // namespace kvframe::examples::holdem
