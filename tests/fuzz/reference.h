// An independent opinion on JSON validity, for differential checks: simdjson's
// DOM parser (stage 2 builds a tape; json_blocker walks with ondemand, a
// different code path) plus our own duplicate-key and nesting checks on its tree.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string_view>

#include "kvframe/json_blocker/error.h"
#include "kvframe/json_blocker/rules.h"

namespace kvframe::fuzz {

struct FrameVerdict {
  // false: the reference cannot judge. simdjson's DOM rejects integers beyond
  // 64 bits, which are valid JSON and which ondemand reads as doubles.
  bool decided = true;
  bool accept = false;
  // The error partition must give when exactly one rule-level reason (size,
  // depth, duplicate key, a scalar root) rejects an otherwise valid document.
  std::optional<ErrorCode> expected_error;
  // The document's root, while accepted; valid until the next judge_frame().
  simdjson::dom::element root;

  bool must_accept() const { return decided && accept; }
  bool must_reject() const { return decided && !accept; }
};

// Whether partition() must accept `input` as a frame under `limits`.
FrameVerdict judge_frame(std::string_view input, const json_blocker::Limits& limits);

// Whether `text` is one valid JSON value (any nesting up to the rules' maximum).
bool is_json(std::string_view text);

// simdjson's minifier: whitespace outside strings removed, tokens untouched.
std::string minified(std::string_view json);

}  // namespace kvframe::fuzz
