// bench_branches: many NPC queries on one frame. Every query has its own final
// block (~40 tokens) and a greedy answer over the frame's shared KV cache;
// this measures them decoded as one batch (Model::forward_branches) against
// one after another with forward() (each over the shared entries, rolled back
// between queries: no copy is timed), in the same run, on a random-weight
// model of a real shape.
//
//   total     prefill of every final block + every answer token, all queries
//   first     the final blocks' prefill alone (batched: one call)
//   row done  mean seconds from the start until a query's answer is complete
//             (batched: every query completes at the end)
// One after another, queries cost the same on average, so by default only
// the first --alone queries run and the columns are scaled to all of them
// (marked ~).
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "branch_timing.h"
#include "model_shapes.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_options/model_options.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/runtime/model.h"

namespace {

namespace rt = kvframe::runtime;
namespace kb = kvframe::bench;

kb::TokenRows random_blocks(int64_t count, int64_t mean_length, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> length(std::max<int64_t>(1, mean_length * 3 / 4), mean_length * 5 / 4);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(n_vocab) - 1);
  kb::TokenRows blocks(static_cast<size_t>(count));
  for (auto& block : blocks) {
    block.resize(static_cast<size_t>(length(rng)));
    for (int32_t& t : block) t = id(rng);
  }
  return blocks;
}

}  // namespace

int main(int argc, char** argv) {
  std::string shape_name = "smollm2-135m";
  kvframe::cli::ModelOptions model_options;  // --device, --dtype, --threads
  std::vector<int64_t> counts = {1, 8, 32};
  int64_t shared_tokens = 4096, block_tokens = 40;
  int steps = 16;
  int64_t alone_sample = 4;
  CLI::App app{"NPC queries on one frame: decoded as one batch (forward_branches) vs one after another (forward)."};
  app.add_option("--shape", shape_name, "random weights of this model shape")
      ->check(CLI::IsMember(kb::model_shape_names()))
      ->capture_default_str();
  kvframe::cli::ModelOptionsSpec which;
  which.model = which.lora = false;  // random weights, no adapter
  kvframe::cli::add_model_options(app, model_options, which);
  app.add_option("--shared", shared_tokens, "tokens in the frame's shared KV cache")->capture_default_str();
  app.add_option("--branches", counts, "query counts to run (comma-separated)")->delimiter(',')->capture_default_str();
  app.add_option("--block", block_tokens, "mean final-block tokens per query (75-125%)")->capture_default_str();
  app.add_option("--steps", steps, "answer tokens per query")->capture_default_str();
  app.add_option("--alone", alone_sample, "one after another: run this many queries and scale to all (0: all)")
      ->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, model_options.threads);

  auto made = kb::random_weight_model(shape_name, model_options.device, model_options.dtype);
  if (!made) {
    std::fprintf(stderr, "bench_branches: %s\n", made.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }
  const rt::Model& model = **made;
  const rt::ModelConfig& c = model.config();
  std::fprintf(stderr, "[bench] %s: %lld layers, dim %lld, %lld/%lld heads; %s %s; %s\n", c.name.c_str(),
               static_cast<long long>(c.n_layer), static_cast<long long>(c.n_embd), static_cast<long long>(c.n_head),
               static_cast<long long>(c.n_head_kv), model_options.device.c_str(), at::toString(model.dtype()),
               rt::cpu_backend_description().c_str());
  const rt::KvCache shared = kb::random_shared_cache(model, shared_tokens);
  // Warm-up: libtorch's first calls allocate and pick kernels.
  (void)kb::time_batched(model, shared, random_blocks(2, block_tokens, c.n_vocab, 1), 2);
  (void)kb::time_one_by_one(model, shared, random_blocks(1, block_tokens, c.n_vocab, 2), 2);

  std::printf("\n%lld shared tokens, ~%lld-token final blocks, %d answer tokens per query\n",
              static_cast<long long>(shared_tokens), static_cast<long long>(block_tokens), steps);
  std::printf("%8s | %10s %10s %10s | %10s %10s %10s | %8s %8s\n", "queries", "batch s", "first s", "row done",
              "1-by-1 s", "first s", "row done", "speedup", "same");
  for (int64_t B : counts) {
    std::fprintf(stderr, "[bench] %lld queries\n", static_cast<long long>(B));
    const kb::TokenRows blocks = random_blocks(B, block_tokens, c.n_vocab, 100 + static_cast<uint32_t>(B));
    const kb::BranchTiming batched = kb::time_batched(model, shared, blocks, steps);
    const int64_t k = alone_sample > 0 ? std::min(alone_sample, B) : B;
    const kb::BranchTiming alone =
        kb::time_one_by_one(model, shared, kb::TokenRows(blocks.begin(), blocks.begin() + k), steps);
    // Scaled to B queries: query i completes after i + 1 average queries.
    const double scale = static_cast<double>(B) / static_cast<double>(k), per_query = alone.total_s / static_cast<double>(k);
    const double alone_total = alone.total_s * scale, alone_first = alone.first_s * scale;
    const double alone_done = k == B ? alone.mean_row_done() : per_query * static_cast<double>(B + 1) / 2.0;
    int same = 0;
    for (int64_t b = 0; b < k; ++b) same += batched.answers[b] == alone.answers[b] ? 1 : 0;
    const char mark = k == B ? ' ' : '~';
    std::printf("%8lld | %10.3f %10.3f %10.3f | %c%9.3f %c%9.3f %c%9.3f | %7.2fx %4d/%-3lld\n",
                static_cast<long long>(B), batched.total_s, batched.first_s, batched.mean_row_done(), mark,
                alone_total, mark, alone_first, mark, alone_done, alone_total / batched.total_s, same,
                static_cast<long long>(k));
    std::fflush(stdout);
  }
  std::printf("speedup: one-by-one total / batched total; same: queries run both ways whose greedy answers agree\n");
  std::printf("~: one after another, scaled from the first %lld queries (--alone)\n", static_cast<long long>(alone_sample));
  return kvframe::kExitOk;
}
