// What must hold for every input, whatever the bytes. A violation prints what
// broke and traps, so libFuzzer saves the input and the replay test fails.
// `what` (a std::string expression) is only evaluated on failure.
#pragma once

#include <string>
#include <string_view>

#include "kvframe/json_blocker/diff.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/rules.h"

#define FUZZ_CHECK(condition, what)                                                  \
  do {                                                                               \
    if (!(condition)) ::kvframe::fuzz::invariant_violated(what, __FILE__, __LINE__); \
  } while (false)

namespace kvframe::fuzz {

[[noreturn]] void invariant_violated(const std::string& what, const char* file, int line);

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
