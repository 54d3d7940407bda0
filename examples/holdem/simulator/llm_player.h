// The LLM bot and the LLM commentator: game code on kvframe's client.
//
// At each decision the bot sends the gamecore (gamecore_json) as the next
// frame of its session and asks for an npc_action whose JSON Schema admits
// exactly the legal actions (action_schema_json), so the model cannot answer
// with an illegal one. With several modes (block, then e.g. full) it keeps a
// session per mode, sends each the same frame and question in turn, and plays
// the first mode's answer: the others are measured on the same decision
// points (latency, tokens, agreement).
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

#include "holdem/players.h"
#include "holdem/raise_sizes.h"
#include "holdem/seat_read.h"
#include "kvframe/client/kvframe_client.hpp"

namespace kvframe::examples::holdem {

struct LlmParams {
  std::vector<kvf_mode> modes = {KVF_MODE_BLOCK};  // the first plays
  std::string rules_json;     // block rules (holdem_rules_json())
  uint32_t context_tokens = 0;  // 0: the server's default
  uint32_t max_tokens = 32;
};

const char* mode_name(kvf_mode mode);  // "full", "prefix", "block"

// What the LLM bot and the commentator say to the model: their system
// prompts and questions (kvframe-finetune's data asks the same).
extern const char* const kPlayerSystemPrompt;
extern const char* const kCommentatorSystemPrompt;
// The seat's question carries its read (seat_read_sentence()) besides the
// gamecore's your_read block: see there why. It names the raises offered
// (raise_menu()), the amounts the schema admits.
std::string player_instruction(const PlayerInfo& me, const LegalActions& legal, const SeatRead& read,
                               const std::vector<RaiseOption>& raises);
std::string commentary_question(const Hand& hand, std::uint64_t hand_number, const std::vector<PlayerInfo>& players);

class LlmPlayer : public Player {
 public:
  // Opens one session per mode. Fails with the server's reason.
  static client::Expected<std::unique_ptr<LlmPlayer>> open(client::Client& client, const PlayerInfo& me,
                                                          const LlmParams& params);
  std::string kind() const override { return "llm"; }
  Decision decide(const DecisionView& view) override;
  // Streams the seat's view to every mode's session, as a game streams its
  // state: kvframe encodes it while the table waits, so the decision finds
  // it ready. The frame's acks are not waited for.
  void watch(const DecisionView& view) override;
  // The last error the server gave (a failed query counts as an invalid action).
  const std::string& last_error() const { return last_error_; }

 private:
  struct ModeSession {
    kvf_mode mode;
    client::Session session;
    uint64_t frames = 0;
  };
  LlmPlayer(PlayerInfo me, LlmParams params)
      : me_(std::move(me)), params_(std::move(params)), reference_(kReferenceSeed) {}
  static constexpr std::uint64_t kReferenceSeed = 0x7a6;
  ModelSample ask(ModeSession& mode, const std::string& frame, const client::QueryParams& query,
                  const LegalActions& legal, const std::vector<std::int64_t>& raise_amounts);

  PlayerInfo me_;
  LlmParams params_;
  std::vector<ModeSession> sessions_;
  std::string last_error_;
  TightAggressive reference_;  // Decision::reference, with a generator of its own
};

// Streams commentary on the notable hands, those whose pot reached 100 big
// blinds (a stack's worth: an all-in was called, or a big multiway pot). Each
// is one sentence from a text query on the finished hand's gamecore, its
// chunks handed to `on_chunk` as they arrive.
class Commentator {
 public:
  static client::Expected<std::unique_ptr<Commentator>> open(client::Client& client, const LlmParams& params);
  static bool notable(const Hand& hand);
  // The whole commentary (also streamed); empty when the query failed.
  std::string comment(const Hand& hand, std::uint64_t hand_number, const MatchMemory& memory, int viewer,
                      const std::function<void(std::string_view)>& on_chunk);

 private:
  explicit Commentator(client::Session session) : session_(std::move(session)) {}
  client::Session session_;
  uint64_t frames_ = 0;
};

}  // namespace kvframe::examples::holdem
