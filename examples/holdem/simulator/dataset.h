// Block fine-tuning data from matches (kvframe-holdem --dataset): the game
// writes the records kvframe-finetune trains on (docs/finetune.md).
//
// At every decision of every seat: the gamecore that seat sees, exactly as
// the LLM bot sends it, the LLM bot's system prompt, instruction and action
// schema, and as the target what the tight-aggressive bot would do there —
// so a tuned model also plays better. After a notable hand (the
// commentator's threshold): the commentator's question on the hand, with a
// sentence of its facts as the target. rules.json is written beside the file.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "holdem/players.h"

namespace kvframe::examples::holdem {

class DatasetWriter {
 public:
  // Appends to `path` (a .jsonl file), writing rules.json beside it. Null,
  // with the reason in *error, when either cannot be written.
  static std::unique_ptr<DatasetWriter> open(const std::string& path, std::uint64_t seed, std::string* error);

  void decision(const DecisionView& view, const std::vector<PlayerInfo>& players);
  void commentary(const Hand& hand, std::uint64_t hand_number, const MatchMemory& memory, int viewer);
  std::int64_t records() const { return records_; }

 private:
  DatasetWriter(std::ofstream out, std::uint64_t seed) : out_(std::move(out)), teacher_(seed), seed_(seed) {}
  std::ofstream out_;
  TightAggressive teacher_;  // the target's bot, with a generator of its own
  std::uint64_t seed_;
  std::int64_t records_ = 0;
};

}  // namespace kvframe::examples::holdem
