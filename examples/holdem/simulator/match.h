// A match: hands played one after another by a table of players, each hand
// from the same starting stacks (reset, as in bot-evaluation matches, so
// every hand counts the same in bb/100; 100 big blinds each by default), the
// button moving one seat per hand.
//
//   Match match(params, std::move(seats));
//   match.play(observer);                    // per-hand lines, commentary
//   match.results();                         // per-hand nets, decisions
//   match.replay_record();                   // the replay page's JSON
//
// Replays: hand n's deck depends only on (seed, n), and every bot draws from
// its own seeded generator, so a match with a fixed seed plays identically
// (the LLM bot too: it decodes greedily).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "holdem/gamecore.h"
#include "holdem/players.h"
#include "holdem/table.h"

namespace kvframe::examples::holdem {

struct MatchParams {
  TableConfig table;            // seats = the number of players
  std::int64_t stack = 1000;    // every hand starts from it
  std::vector<std::int64_t> stacks;  // per seat, > 0; when set, it replaces `stack`
  int hands = 30;
  std::uint64_t seed = 1;
  int history_hands = 100;      // finished hands kept in the gamecore
  // A game's pace: after each change at the table (deal, action, result) every
  // player watches the new state (Player::watch: the LLM bot streams it to
  // kvframe as a frame) and the table waits this long, as a real table's
  // animations do, before the next seat decides. 0: no watching, no waiting.
  int pace_ms = 0;
};

struct SeatedPlayer {
  PlayerInfo info;
  std::unique_ptr<Player> player;
};

// One decision of a seat, as played.
struct DecisionRecord {
  std::uint64_t hand = 0;
  int seat = 0;
  Street street = Street::kPreflop;
  Decision decision;
};

// Hooks for what happens; all optional. on_hand_end runs after the hand is
// in the match's memory and may add comment lines to the replay.
struct MatchObserver {
  std::function<void(std::uint64_t hand, const std::string& line)> on_hand_line;
  // Before a seat decides, with what it sees (training data records it).
  std::function<void(const DecisionView& view)> on_turn;
  std::function<void(const Hand& hand, int seat, const Decision& decision)> on_decision;
  // Once a hand is over, with its deck in dealing order (hand histories).
  std::function<void(const Hand& hand, std::uint64_t hand_number, const std::vector<Card>& deck)> on_hand_over;
  // Returns the commentary on the hand (empty: none).
  std::function<std::string(const Hand& hand, std::uint64_t hand_number, const MatchMemory& memory)> on_hand_end;
};

class Match {
 public:
  // std::invalid_argument when the seats or params.stacks do not fit
  // params.table.seats, or a stack is not positive.
  Match(MatchParams params, std::vector<SeatedPlayer> seats);

  void play(const MatchObserver& observer = {});

  const MatchParams& params() const { return params_; }
  const std::vector<SeatedPlayer>& seats() const { return seats_; }
  // net[hand][seat], chips.
  const std::vector<std::vector<std::int64_t>>& nets() const { return nets_; }
  const std::vector<DecisionRecord>& decisions() const { return decisions_; }
  // The replay page's record without "report" (see replay_html.h).
  const nlohmann::ordered_json& replay_record() const { return record_; }

 private:
  void play_hand(std::uint64_t number, const MatchObserver& observer);
  void pause_for_watchers(const Hand& hand, std::uint64_t number);

  MatchParams params_;
  std::vector<SeatedPlayer> seats_;
  MatchMemory memory_;
  std::vector<std::vector<std::int64_t>> nets_;
  std::vector<DecisionRecord> decisions_;
  nlohmann::ordered_json record_;
};

// One line per finished hand: "hand_0007  p3 wins 120 (showdown: two pair, kings and nines)  p1 -20 p3 +120 ...".
std::string hand_line(const Hand& hand, std::uint64_t number, const std::vector<PlayerInfo>& players);
// A commentator's sentence of the same facts: "Ada takes 120 chips with two pair, kings and nines!"
// (the commentary target of kvframe-finetune's data).
std::string hand_summary(const Hand& hand, const std::vector<PlayerInfo>& players);

}  // namespace kvframe::examples::holdem
