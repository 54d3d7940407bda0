#include "branch_timing.h"

#include <ATen/ATen.h>
#include <algorithm>
#include <chrono>
#include <numeric>

namespace kvframe::bench {
namespace {

using Clock = std::chrono::steady_clock;
namespace rt = runtime;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The argmax of each row of fp32 logits [B, n_vocab] (this also waits for a
// device's queued work).
std::vector<int32_t> greedy(const at::Tensor& logits) {
  const at::Tensor best = logits.argmax(-1).to(at::kCPU);
  std::vector<int32_t> out;
  for (int64_t b = 0; b < best.size(0); ++b) out.push_back(static_cast<int32_t>(best[b].item<int64_t>()));
  return out;
}

int64_t longest(const TokenRows& rows) {
  size_t n = 0;
  for (const auto& row : rows) n = std::max(n, row.size());
  return static_cast<int64_t>(n);
}

}  // namespace

double BranchTiming::mean_row_done() const {
  if (row_done_s.empty()) return 0;
  return std::accumulate(row_done_s.begin(), row_done_s.end(), 0.0) / static_cast<double>(row_done_s.size());
}

rt::KvCache random_shared_cache(const rt::Model& model, int64_t tokens, int64_t room) {
  rt::KvCache cache = *model.new_cache(std::max<int64_t>(1, tokens + room));
  for (size_t l = 0; l < cache.k.size(); ++l) {
    cache.k[l].normal_();
    cache.v[l].normal_();
  }
  cache.length = cache.next_position = tokens;
  return cache;
}

BranchTiming time_batched(const rt::Model& model, const rt::KvCache& shared, const TokenRows& blocks, int steps) {
  BranchTiming out;
  const auto B = static_cast<int64_t>(blocks.size());
  rt::BranchCache branches = *model.new_branches(shared, B, longest(blocks) + steps);
  out.answers.resize(blocks.size());
  const auto start = Clock::now();
  std::vector<int32_t> next = greedy(*model.forward_branches(blocks, shared, branches));
  out.first_s = since(start);
  for (int s = 0; s < steps; ++s) {
    TokenRows step;
    for (size_t b = 0; b < blocks.size(); ++b) {
      out.answers[b].push_back(next[b]);
      step.push_back({next[b]});
    }
    if (s + 1 < steps) next = greedy(*model.forward_branches(step, shared, branches));
  }
  out.total_s = since(start);
  out.row_done_s.assign(blocks.size(), out.total_s);
  return out;
}

BranchTiming time_one_by_one(const rt::Model& model, const rt::KvCache& shared, const TokenRows& blocks,
                             int steps) {
  BranchTiming out;
  rt::KvCache work = *model.new_cache(shared.length + longest(blocks) + steps);
  for (size_t l = 0; l < work.k.size(); ++l) {
    work.k[l].narrow(1, 0, shared.length).copy_(shared.k[l].narrow(1, 0, shared.length));
    work.v[l].narrow(1, 0, shared.length).copy_(shared.v[l].narrow(1, 0, shared.length));
  }
  if (shared.padding.defined()) {
    work.padding = at::zeros({work.capacity}, shared.padding.options());
    work.padding.narrow(0, 0, shared.length).copy_(shared.padding.narrow(0, 0, shared.length));
  }
  auto ids = [&](const std::vector<int32_t>& t) {
    return at::tensor(std::vector<int64_t>(t.begin(), t.end()), at::kLong);
  };
  const auto start = Clock::now();
  for (const auto& block : blocks) {
    work.length = shared.length;
    work.next_position = shared.next_position;
    const auto row_start = Clock::now();
    int32_t next = greedy(*model.forward(ids(block), work))[0];
    out.first_s += since(row_start);
    std::vector<int32_t> answer;
    for (int s = 0; s < steps; ++s) {
      answer.push_back(next);
      if (s + 1 < steps) next = greedy(*model.forward(ids({next}), work))[0];
    }
    out.answers.push_back(answer);
    out.row_done_s.push_back(since(start));
  }
  out.total_s = since(start);
  return out;
}

}  // namespace kvframe::bench
