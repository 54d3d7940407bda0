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

// Rules that split everything splittable, so small test documents show structure.
inline Rules eager_rules() {
  Rules rules;
  rules.min_split_bytes = 0;
  return rules;
}

}  // namespace kvframe::json_blocker::testing
