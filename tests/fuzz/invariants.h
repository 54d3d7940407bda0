// What must hold for every json_blocker input, whatever the bytes (checked
// with FUZZ_CHECK, fuzz_check.h).
#pragma once

#include <string>
#include <string_view>

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/rules.h"

#include "fuzz_check.h"

namespace kvframe::fuzz {

// Partitions `input` under `rules`, checks the outcome against the reference
// parser (accepted exactly when it must be) and, on success, checks the blocks.
void check_partition(std::string_view input, const json_blocker::Rules& rules);

// The blocks of a successful partition of `input`.
void check_blocks(std::string_view input, const json_blocker::Partition& partition,
                  const json_blocker::Rules& rules);

// `diff` is diff(previous, current): consistent entries, counts and bytes.
void check_diff(const json_blocker::Partition& previous, const json_blocker::Partition& current,
                const json_blocker::FrameDiff& diff);

}  // namespace kvframe::fuzz
