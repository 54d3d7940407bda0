// Players: anything that picks an action for a seat.
//
// The rule bots here need no model: RandomPlayer, CallingStation and
// TightAggressive (Monte Carlo equity). The LLM bot (llm_player.h) asks a
// kvframe server.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/deterministic_rng.h"
#include "holdem/action_choice.h"
#include "holdem/gamecore.h"
#include "holdem/seat_read.h"
#include "holdem/table.h"

namespace kvframe::examples::holdem {

// The decision a seat faces; valid during Player::decide.
struct DecisionView {
  const Hand& hand;
  int seat;                   // decide(): == hand.to_act(); watch(): the watcher's seat
  const MatchMemory& memory;
  std::uint64_t hand_number;  // 1-based
};

// One answer of the model, in one attention mode.
struct ModelSample {
  std::string mode;            // "block", "prefix", "full"
  double ttft_ms = 0;          // query sent -> first token
  double total_ms = 0;         // query sent -> result
  std::int64_t tokens_encoded = 0;  // prompt tokens encoded for this decision (frame + query)
  std::int64_t tokens_prompt = 0;   // the whole prompt: what a full prefill encodes
  // Encoded ahead for the frames streamed since the last decision (the
  // table's states a later one superseded): the rest of what it cost.
  std::int64_t tokens_encoded_superseded = 0;
  // Where the time to the first token went, as the server reports it: waiting
  // behind other work, encoding the frame's blocks (what was not encoded
  // ahead), the query block over the context; first_token_ms is the engine's
  // whole time to the first token (the first decoding step included).
  double queue_ms = 0, encode_ms = 0, query_prefill_ms = 0, first_token_ms = 0;
  std::int64_t blocks_reused = 0, blocks_total = 0;
  std::string answer;          // the action JSON as the model wrote it
  bool valid = false;          // a legal action
  Action action;               // when valid
  // How sure the model was of the action's kind (the server's choices,
  // action_choice.h); nullopt when the server reported none.
  std::optional<ActionChoice> choice;

  // Whether this answer is the action that was played.
  bool chose(const Action& played) const { return valid && action == played; }
};

struct Decision {
  Action action;
  // LLM players: one sample per mode run, the first the one played.
  std::vector<ModelSample> samples;
  bool invalid = false;  // the answer was not legal; `action` is then check or fold
  // LLM players: what the tight-aggressive bot does on the same state, the
  // action the LLM bot is trained toward and measured against.
  std::optional<Action> reference;
};

class Player {
 public:
  virtual ~Player() = default;
  virtual std::string kind() const = 0;  // "random", "station", "tag", "llm"
  virtual Decision decide(const DecisionView& view) = 0;
  // The table changed (a hand began, someone acted, the result showed) and the match is paced
  // (MatchParams::pace_ms): what this player's seat now sees. The LLM bot
  // streams it to kvframe as a frame; the others ignore it.
  virtual void watch(const DecisionView& /*view*/) {}
};

// Picks uniformly among fold (only when facing a bet), check/call and raise;
// a raise's size is uniform in [min, max] with a bias to small raises.
class RandomPlayer : public Player {
 public:
  explicit RandomPlayer(std::uint64_t seed);
  std::string kind() const override { return "random"; }
  Decision decide(const DecisionView& view) override;

 private:
  DeterministicRng rng_;
};

// Never folds, never raises: checks or calls.
class CallingStation : public Player {
 public:
  std::string kind() const override { return "station"; }
  Decision decide(const DecisionView& view) override;
};

// Tight-aggressive rules: preflop by a starting-hand chart and position;
// postflop by Monte Carlo equity against the opponents still in, compared with
// the pot odds: raise strong hands (pot-sized), call when equity beats the
// price, otherwise check or fold; occasional continuation bets.
class TightAggressive : public Player {
 public:
  struct Params {
    int trials = kDecisionTrials;  // Monte Carlo deals per postflop decision
  };
  explicit TightAggressive(std::uint64_t seed);
  TightAggressive(std::uint64_t seed, Params params);
  std::string kind() const override { return "tag"; }
  Decision decide(const DecisionView& view) override;

 private:
  DeterministicRng rng_;
  Params params_;
};

// "random" | "station" | "tag" -> a player seeded with `seed`; nullptr for
// other names (the LLM bot is made by the simulator, which owns the client).
std::unique_ptr<Player> make_rule_player(const std::string& kind, std::uint64_t seed);

}  // namespace kvframe::examples::holdem
