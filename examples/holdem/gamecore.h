// The gamecore JSON the Hold'em engine emits at every decision, shaped like
// the seed's Figure 5 ("Block-attention for Efficient Prefilling", arXiv:2409.15355, Appendix A), plus what a
// real game keeps about the match: its hand history and per-opponent stats.
//
//   {"state": {"hand": "hand_0042", "street": "flop", "pot": 60, "button": "p3",
//              "to_act": "p1", "board": ["Ah","7c","2d"],
//              "chips": {"p1": {"bet": 10, "remain": 990}, ...},  bet: this street
//              "players": [{"id": "p1", "seat": 1, "name": "Ada", "position": "BB",
//                           "status": "active", "hole_cards": ["Kd","Ks"]}, ...],
//              "actions": ["p6 small_blind 5", "p1 big_blind 10", "p4 raise 30", ...,
//                          "flop Ah 7c 2d", "p1 check", ...],   this hand so far
//              "legal_actions": [{"action": "fold"}, {"action": "call", "amount": 20},
//                                {"action": "raise", "min": 50, "max": 990}]},
//    "history": [{"id": "hand_0041", "button": "p2", "board": "Ah 7c 2d 9s Kd",
//                 "actions": {"preflop": "p3 r30, p4 c", "flop": "p3 r40, p4 f"},
//                 "pot": 95, "winners": {"p3": 95},
//                 "showdown": {"p3": "As Kc, two pair, aces and kings", ...}},  only after one
//                ...],                                  finished hands, oldest first
//    "opponent_stats": {"p2": {"hands": 41, "vpip": 0.27, "pfr": 0.12, "aggression": 1.5,
//                              "wtsd": 0.3, "won_at_showdown": 0.5, "net_bb": -12.5,
//                              "last_action": "fold"}, ...},
//    "your_read": {"hand": "top pair, king kicker", "equity_pct": 62, "opponents": 2,
//                  "to_call": 40, "pot_odds_pct": 25, "call_edge_pct": 37, "spr": 4.2}}
//
// State: the scalars come first so they make one block; "position" is BTN,
// SB, BB, then UTG, UTG+1, MP, LJ, HJ, CO as far as the table needs ("" for a
// seat sitting out); "status" is active | folded | all_in | out; "actions"
// are action_line()s with a marker where each street begins; "legal_actions"
// are the viewer's, so empty unless it is to act. History shorthand: f fold,
// x check, c call, rN raise to N, "checked" for a street of checks; blinds
// and folds before anyone entered the pot are left out; "pot" is what was
// won (a bet nobody called went back to its owner). Stats are rates with
// two decimals over all hands recorded (wtsd: showdowns per flop seen;
// aggression: raises per call). "your_read" is the viewer's own read of its
// decision (seat_read.h: its hand in words, its equity against the opponents
// still in, the call's price): what a game would tell its NPC rather than
// leave a small model to work out from card strings; {} unless the viewer is
// to act. Last, so it is read just before the question.
//
// Only the viewer's hole cards are shown (and, in history, cards shown at
// showdown). With holdem.rules.json every chips entry, player, history hand and
// opponent's stats is a block of its own, so a long match has hundreds of
// blocks while one viewer's frames at consecutive decisions at the table
// (whoever acts) differ in a few: the acting seat's chips (or its player
// entry when it folds), the state's scalars and actions, and the legal
// actions and the read when the viewer's turn comes or goes; a new street also the board
// and every bet. After a hand: one new history block and the stats of those
// who played it. (Frames only at the viewer's own decisions differ by
// everything the others did in between; frames from each actor's view differ
// also in the hole cards shown and the stats left out.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "holdem/table.h"

namespace kvframe::examples::holdem {

struct PlayerInfo {
  std::string id;    // "p1".."p9": seat index + 1
  std::string name;  // "Ada"
};
// p1..pN with the names the sample states use.
std::vector<PlayerInfo> default_players(int seats);

// "hand_0042".
std::string hand_id(std::uint64_t hand_number);

// What the table remembers of the match: the last `history_hands` finished
// hands and every player's running statistics.
class MatchMemory {
 public:
  MatchMemory(std::vector<PlayerInfo> players, int history_hands);
  // Call once per finished hand (hand.over()); std::invalid_argument for a
  // hand not over or with another number of seats.
  void record(const Hand& hand, std::uint64_t hand_number);

  const std::vector<PlayerInfo>& players() const;
  std::uint64_t hands_recorded() const;
  // The JSON of "history" and "opponent_stats" as seen by `viewer` (its own
  // stats are left out of opponent_stats; a viewer that is no seat, such as
  // -1 for a commentator, sees everyone's).
  std::string history_json() const;
  std::string opponent_stats_json(int viewer) const;

 private:
  // Running counts per player over every hand recorded; the JSON shows
  // rates derived from them.
  struct PlayerStats {
    std::int64_t hands = 0;          // dealt in
    std::int64_t vpip = 0;           // put chips in preflop by choice (call or raise)
    std::int64_t pfr = 0;            // raised preflop
    std::int64_t raises = 0;         // all streets
    std::int64_t calls = 0;          // all streets
    std::int64_t saw_flop = 0;       // still in when the flop came
    std::int64_t showdowns = 0;      // still in at a showdown
    std::int64_t showdowns_won = 0;  // won chips at a showdown
    std::int64_t net = 0;            // chips won minus lost
    std::string last_action;         // "fold", "check", "call", "raise"; "" before any
  };

  void update_stats(const Hand& hand);
  std::string stats_json(const PlayerStats& stats) const;

  std::vector<PlayerInfo> players_;
  std::size_t history_hands_;
  std::uint64_t hands_recorded_ = 0;
  std::int64_t big_blind_ = 1;  // of the last hand recorded: net_bb's unit
  std::vector<std::string> history_;  // each kept hand's JSON, oldest first
  std::string history_json_;          // "[" + history_ joined + "]", rebuilt by record()
  std::vector<PlayerStats> stats_;
  std::vector<std::string> stats_json_;  // per player, rebuilt by record()
};

// The gamecore of the decision now facing `viewer` (== hand.to_act()), or of
// a finished hand's last state when hand.over() (legal_actions then empty).
// Any seat may view any decision (a seat's frames while the others act):
// legal_actions are then empty. Throws std::invalid_argument when `viewer`
// is not a seat or `memory` has another number of players.
std::string gamecore_json(const Hand& hand, int viewer, const MatchMemory& memory, std::uint64_t hand_number);

// The block rules for gamecore_json's documents (holdem.rules.json's text).
std::string holdem_rules_json();

// A JSON Schema (the subset runtime/output serves) whose valid values are
// exactly the legal actions: {"action":"fold"} | {"action":"check"} or
// {"action":"call"} | {"action":"raise","amount": min..max}. Given raise
// amounts (raise_sizes.h's menu, each legal), a raise is one of those alone.
std::string action_schema_json(const LegalActions& legal, const std::vector<std::int64_t>& raise_amounts = {});

// The action an answer valid under action_schema_json (with the same raise
// amounts) names; nullopt when the JSON is not one of those actions (then
// the bot's answer was invalid).
std::optional<Action> action_from_json(std::string_view json, const LegalActions& legal,
                                       const std::vector<std::int64_t>& raise_amounts = {});
// An action as the LLM bot answers it: {"action":"raise","amount":120}, {"action":"fold"}.
std::string action_json(const Action& action);

// The action as the history and commentary write it: "p4 raise 30", "p1 fold".
std::string action_line(const PlayerInfo& player, const ActionRecord& record);

}  // namespace kvframe::examples::holdem
