// Timing many NPC queries on one frame (bench_branches; reusable by an
// end-to-end benchmark): every query's final block and answer over one
// shared KV cache, decoded as one batch (Model::forward_branches) or one
// query after another (Model::forward, what a session does without it).
#pragma once

#include <cstdint>
#include <vector>

#include "kvframe/runtime/model.h"

namespace kvframe::bench {

using TokenRows = std::vector<std::vector<int32_t>>;

struct BranchTiming {
  double first_s = 0;                // the final blocks' prefill (batched: one call; one after another: summed)
  double total_s = 0;                // prefill and every decode step of every query
  std::vector<double> row_done_s;    // per query: seconds from the start until its answer is complete
  TokenRows answers;                 // per query: its greedy tokens
  double mean_row_done() const;
};

// A cache of `tokens` entries of random keys and values (the cost of attending
// to them does not depend on what they hold), made in a second instead of a
// prefill; capacity `tokens + room` so that forward() can run on it.
runtime::KvCache random_shared_cache(const runtime::Model& model, int64_t tokens, int64_t room = 0);

// `blocks` (one final block per query) then `steps` greedy decode steps,
// all queries as one batch over `shared`.
BranchTiming time_batched(const runtime::Model& model, const runtime::KvCache& shared, const TokenRows& blocks,
                          int steps);

// The same queries one after another with forward(), each over `shared`'s
// entries (a working copy, made before the clock starts and rolled back
// after each query; shared needs no room of its own).
BranchTiming time_one_by_one(const runtime::Model& model, const runtime::KvCache& shared, const TokenRows& blocks,
                             int steps);

}  // namespace kvframe::bench
