// Writes a number the way a Quantize rule says (internal to json_blocker).
//
// The walker calls it for each number under a quantize path while it writes
// the canonical text, so blocks, hashes and the diff all see the coarse value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/rules.h"

namespace kvframe::json_blocker::detail {

class NumberQuantizer {
 public:
  explicit NumberQuantizer(const Quantize& rule);  // rule must pass check_rules

  // The text that replaces `token` (the number as written, whose value is
  // `value`): a view of `token`, of this quantizer, or of `scratch`.
  std::string_view apply(double value, std::string_view token, std::string& scratch) const;

 private:
  std::string_view round(double value, std::string_view token, std::string& scratch) const;
  std::string_view level(double value) const;

  std::optional<int> digits_;
  std::vector<double> edges_;
  std::vector<std::string> edge_texts_;  // each edge as the model reads it
};

}  // namespace kvframe::json_blocker::detail
