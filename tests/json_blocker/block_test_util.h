// Helpers shared by the json_blocker tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvframe/json_blocker/partition.h"

namespace kvframe::json_blocker::testing {

inline Partition must_partition(std::string_view json, const Rules& rules = {}) {
  auto result = partition(json, rules);
  if (!result.ok()) {
    ADD_FAILURE() << "partition failed: " << result.error().to_string();
    return Partition{};
  }
  return std::move(result).value();
}

inline std::vector<std::string> ids(const Partition& p) {
  std::vector<std::string> out;
  for (const Block& b : p.blocks()) out.emplace_back(b.id);
  return out;
}

inline std::vector<std::string> texts(const Partition& p) {
  std::vector<std::string> out;
  for (const Block& b : p.blocks()) out.emplace_back(b.text);
  return out;
}

// A rules file parse_rules must refuse, and what its message must name (the
// bad entry, as `arrays[1] ("tiles")`, so a game programmer finds the one to fix).
struct BadRules {
  const char* json;
  const char* names;
};

inline void expect_refused_naming_the_entry(const BadRules& bad) {
  auto rules = parse_rules(bad.json);
  ASSERT_FALSE(rules.ok()) << bad.json;
  EXPECT_EQ(rules.error().code, ErrorCode::kInvalidRules) << bad.json;
  EXPECT_NE(rules.error().message.find(bad.names), std::string::npos) << bad.json << " -> " << rules.error().message;
}

// Rules that split everything splittable, so small test documents show structure.
inline Rules eager_rules() {
  Rules rules;
  rules.min_split_bytes = 0;
  return rules;
}

}  // namespace kvframe::json_blocker::testing
