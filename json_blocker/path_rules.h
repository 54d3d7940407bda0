// The per-path entries of a rules file, "quantize" and "arrays": reading them
// and checking them (internal to json_blocker; the types are in rules.h).
//
// Every error names the entry, as `quantize[1] ("grid[*][*]")`, so a game
// programmer with a long rules file finds the one to fix.
#pragma once

#include <simdjson.h>

#include <optional>
#include <string>
#include <vector>

#include "kvframe/common/named_values.h"
#include "kvframe/json_blocker/error.h"
#include "kvframe/json_blocker/rules.h"

namespace kvframe::json_blocker::detail {

// A rule's "cut" as written in a rules file and printed by array_cut_name.
inline constexpr NamedValue<ArrayCut> kArrayCutNames[] = {
    {ArrayCut::kRows, "rows"}, {ArrayCut::kElements, "elements"}, {ArrayCut::kChunk, "chunk"}};

// ErrorCode::kInvalidRules with "rules: " + what.
Error rules_error(const std::string& what);

// Shape and types only; ranges are checked by the check_* functions below.
Result<std::vector<Quantize>> read_quantize(simdjson::dom::element value);
Result<std::vector<ArrayRule>> read_array_rules(simdjson::dom::element value);

// Ranges, exactly-one-of choices, ascending edges and the path patterns.
Status check_quantize(const std::vector<Quantize>& rules);
Status check_array_rules(const std::vector<ArrayRule>& rules);

}  // namespace kvframe::json_blocker::detail
