// Held-out evaluation of block fine-tuning: each example asked in several
// attention modes through real Sessions (the engine's own query path, output
// schema included), answers compared with the target and with the reference
// mode (full), first-token distributions compared by KL.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kvframe/common/block_fidelity.h"
#include "kvframe/finetune/dataset.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::finetune {

struct EvalParams {
  // The first mode is the reference the others are compared with.
  std::vector<runtime::AttentionMode> modes = {runtime::AttentionMode::kFull, runtime::AttentionMode::kBlock};
  int32_t max_tokens = 32;
  bool blocks_after_prefix = false;
  common::BlockFidelity fidelity;  // block sessions' fidelity knobs
};

struct ModeAnswer {
  std::string text;
  int64_t first_token = -1;  // argmax of the first token's logits
  double kl_vs_reference = 0;  // KL(reference || this mode) of the first token, nats
  double ms = 0;               // query latency (TTFT + decoding)
  int64_t tokens_encoded = 0;  // tokens run through the model before the first (QueryReport::tokens_encoded)
  bool matches_target = false;
  bool matches_reference = false;
};

struct EvalRecord {
  std::string id;
  std::vector<ModeAnswer> modes;  // in EvalParams::modes order
};

struct ModeSummary {
  runtime::AttentionMode mode;
  int64_t answers = 0;
  int64_t correct = 0;           // equal to the target (as JSON when the example has a schema)
  int64_t agree = 0;             // equal to the reference mode's answer
  int64_t first_token_agree = 0;
  double kl_mean = 0;            // mean KL(reference || mode) of the first token, nats
  double ms_p50 = 0;
  double tokens_encoded_mean = 0;  // per answer
};

struct EvalReport {
  std::vector<EvalRecord> records;
  std::vector<ModeSummary> modes;
};

// Runs every example in every mode. One session per mode and system prompt
// serves consecutive examples, so block mode reuses the blocks frames share,
// as in a game. A failed query fails the evaluation (its error, naming the
// example).
Result<EvalReport> evaluate(runtime::Engine& engine, const std::vector<Example>& examples, const EvalParams& params,
                            const std::function<void(size_t done, size_t total, const EvalRecord&)>& on_record = {});

// Perplexity of plain text (no blocks: every token a query token, so a
// query-scope adapter applies to all of it): exp of the mean next-token
// cross-entropy, run in windows of `window` tokens, each window's first token
// predicted from the previous window's text (the KV cache carries it; the
// cache restarts every `window` * 4 tokens). kInvalidArgument for fewer than
// 2 tokens.
Result<double> perplexity(const runtime::Model& model, const std::vector<int32_t>& tokens, int64_t window = 512);

// Whether two answers are the same: as JSON values when `as_json`, else as text.
bool same_answer(const std::string& a, const std::string& b, bool as_json);

}  // namespace kvframe::finetune
