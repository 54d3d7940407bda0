// Training data for block fine-tuning: examples read from JSONL files, and
// turned into the token ids the engine would run (docs/finetune.md has the
// format). Games write such files themselves (`kvframe-holdem --dataset`,
// `kvframe-stream --dataset`); a studio points kvframe-finetune at its own
// recorded frames and targets.
//
// One record per line:
//   {"frame": {...gamecore...},              required: the whole game state
//    "instruction": "Choose your action.",   required: the task (final block)
//    "target": "{\"action\":\"fold\"}",      the answer wanted ("" or absent: none yet,
//                                            `kvframe-finetune distill` fills it)
//    "system": "You play ...",               optional: the session's system prompt
//    "schema": {...JSON Schema...},          optional: the answer's schema (evaluation decodes under it)
//    "rules": "rules.json",                  optional: block rules, relative to the file
//                                            (default: rules.json beside it, if there is one)
//    "id": "holdem-s3-h12-d2"}               optional: a name for logs
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvframe/json_blocker/rules.h"
#include "kvframe/common/error.h"
#include "kvframe/runtime/model.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::finetune {

struct Example {
  std::string id;  // the record's, or "<file>:<line>"
  std::string system;
  std::string frame;  // JSON text
  std::string instruction;
  std::string target;
  std::string schema;  // JSON text, "" for free text
  std::shared_ptr<const json_blocker::Rules> rules;
};

// Reads a JSONL file. kIo when it cannot be read; kInvalidArgument naming
// the file and line for a record that is not a JSON object, lacks frame or
// instruction, has a field of the wrong type, or names rules that do not load.
Result<std::vector<Example>> read_examples(const std::string& path);

// Writes examples as JSONL (rules are not written: a record names none, so
// the file needs its rules.json beside it). kIo on failure.
Status write_examples(const std::string& path, const std::vector<Example>& examples);

// The session parameters an example's queries run with.
runtime::SessionParams session_params(const Example& example, runtime::AttentionMode mode,
                                      bool blocks_after_prefix = false);

// The prompts the engine runs for these examples, each with its target's
// tokens and the end-of-turn token as the answer. Examples with the same
// system prompt and rules are one session's frames, in the order given, as
// evaluate() and distill read them: so a block order that depends on earlier
// frames (volatile_last) is the one their sessions read. One result per
// example: kInvalidArgument as PromptRenderer::render, or for an empty target.
std::vector<Result<runtime::PromptSample>> tokenize(const runtime::Engine& engine,
                                                   const std::vector<Example>& examples);

}  // namespace kvframe::finetune
