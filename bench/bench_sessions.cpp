// bench_sessions: the answers of several sessions decoded together, one
// Model::forward_sequences pass a step for all (decode_together), against the
// same answers decoded one session after another (decode), in the same run.
// Each session has its own KV cache holding its own context (--context random
// tokens) and decodes a greedy answer under the same JSON Schema (forced
// runs included), so both ways do exactly the same work token for token;
// the answers are checked identical.
//
//   alone     seconds to decode every session's answer one after another
//   together  seconds to decode them in lockstep
//   tok/s     answer tokens (sampled + forced) per second, all sessions
//
// The step kernels read each weight matrix once a pass, whatever the number
// of tokens in it, and a decoding step on a small model is bound by reading
// them: what one session pays for a step, several share.
//
// With --adapters K, a table of what LoRA adapters per session cost: the
// sessions spread over K query-scope adapters (random), answered as the
// engine answers them together (Session::query_together groups them by
// adapter: a pass a step per adapter), against the same sessions all on
// one adapter (a pass a step for all).
//
// A second table asks the same of encoding: each session's changed blocks
// (--blocks of --block-tokens random tokens) encoded by one
// Model::encode_blocks call per session, against every session's blocks in
// one call. Where encoding is bound by arithmetic (a CPU) packing more
// blocks into a pass gains nothing, and there is no point in packing them
// across sessions; where a pass of a few hundred tokens leaves the device
// idle (a GPU and a large model) it would.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine_setup.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/runtime/generate.h"
#include "kvframe/runtime_output/json_schema.h"
#include "gnuplot_plot.h"

namespace {

namespace rt = kvframe::runtime;
namespace kb = kvframe::bench;
using Clock = std::chrono::steady_clock;

constexpr const char* kSchema =
    R"({"type":"object","additionalProperties":false,"required":["action","target","reason"],)"
    R"("properties":{"action":{"enum":["attack","defend","retreat","trade","wait"]},)"
    R"("target":{"enum":["hero","wolf","tower","merchant"]},"reason":{"type":"string","maxLength":24}}})";

struct Sessions {
  std::vector<rt::KvCache> caches;
  std::vector<at::Tensor> first_logits;
};

// Each session's context through the model, then a copy kept so that both
// ways decode from the same caches.
Sessions prepared(const rt::Model& model, int64_t sessions, int64_t context, int64_t answer, uint32_t seed) {
  Sessions out;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(model.config().n_vocab) - 1);
  for (int64_t s = 0; s < sessions; ++s) {
    std::vector<rt::TokenId> prompt(static_cast<size_t>(context));
    for (auto& t : prompt) t = id(rng);
    rt::KvCache cache = *model.new_cache(context + answer);
    out.first_logits.push_back(*rt::prefill(model, prompt, cache));
    out.caches.push_back(std::move(cache));
  }
  return out;
}

void rewind(Sessions& s, int64_t context) {
  for (rt::KvCache& cache : s.caches) cache.length = cache.next_position = context;
}

struct Row {
  int64_t sessions = 0, tokens = 0, passes_alone = 0, passes_together = 0;
  double alone = 0, together = 0;
  bool same = true;
};

// Decodes `members` of `sessions` together under `adapter`; answer tokens, or -1 on failure.
int64_t decode_group(rt::Engine& engine, const std::shared_ptr<rt::LoraAdapter>& adapter, Sessions& sessions,
                     const std::vector<int64_t>& members, const rt::GenerateParams& params) {
  if (!engine.use_adapter(adapter).ok()) return -1;
  std::vector<rt::Decoder> decoders;
  for (size_t k = 0; k < members.size(); ++k) decoders.emplace_back(engine.tokenizer(), params);
  std::vector<rt::DecodingSequence> together;
  for (size_t k = 0; k < members.size(); ++k) {
    const auto s = static_cast<size_t>(members[k]);
    together.push_back({&sessions.caches[s], sessions.first_logits[s], &decoders[k], {}, {}});
  }
  if (!rt::decode_together(engine.model(), together).ok()) return -1;
  int64_t tokens = 0;
  for (rt::Decoder& decoder : decoders) tokens += static_cast<int64_t>(decoder.finish().tokens.size());
  return tokens;
}

// The --adapters table (see the top of the file).
bool adapter_table(rt::Engine& engine, const rt::GenerateParams& params, const std::vector<int64_t>& counts,
                   int64_t adapter_count, int64_t context, int64_t max_tokens, int reps) {
  std::vector<std::shared_ptr<rt::LoraAdapter>> adapters;
  rt::LoraParams lora;
  for (int64_t a = 0; a < adapter_count; ++a) {
    auto made = rt::LoraAdapter::create(engine.model().config(), lora, engine.model().device(), static_cast<uint64_t>(a));
    if (!made) return false;
    at::NoGradGuard no_grad;
    for (size_t i = 1; i < (*made)->parameters().size(); i += 2) (*made)->parameters()[i].normal_(0, 0.02);
    adapters.push_back(std::move(made).value());
  }
  std::printf("\nsessions spread over %lld query-scope adapters, answered together: one pass a step per adapter "
              "(grouped) vs all on one adapter, best of %d\n", static_cast<long long>(adapter_count), reps);
  std::printf("%8s %10s %14s %14s %10s\n", "sessions", "adapters", "one tok/s", "grouped tok/s", "grouped");
  for (const int64_t n : counts) {
    const int64_t groups = std::min(n, adapter_count);
    Sessions sessions = prepared(engine.model(), n, context, max_tokens, 7);
    std::vector<int64_t> all;
    std::vector<std::vector<int64_t>> by_adapter(static_cast<size_t>(groups));
    for (int64_t s = 0; s < n; ++s) {
      all.push_back(s);
      by_adapter[static_cast<size_t>(s % groups)].push_back(s);
    }
    double one = 0, grouped = 0;  // best answer tokens per second of each way
    for (int rep = 0; rep < reps; ++rep) {
      rewind(sessions, context);
      Clock::time_point start = Clock::now();
      const int64_t one_tokens = decode_group(engine, adapters[0], sessions, all, params);
      const double one_s = std::chrono::duration<double>(Clock::now() - start).count();
      rewind(sessions, context);
      start = Clock::now();
      int64_t grouped_tokens = 0;
      for (size_t g = 0; g < by_adapter.size(); ++g) {
        const int64_t tokens = decode_group(engine, adapters[g], sessions, by_adapter[g], params);
        if (tokens < 0) return false;
        grouped_tokens += tokens;
      }
      const double grouped_s = std::chrono::duration<double>(Clock::now() - start).count();
      if (one_tokens < 0) return false;
      one = std::max(one, static_cast<double>(one_tokens) / one_s);
      grouped = std::max(grouped, static_cast<double>(grouped_tokens) / grouped_s);
    }
    std::printf("%8lld %10lld %14.1f %14.1f %9.2fx\n", static_cast<long long>(n), static_cast<long long>(groups), one,
                grouped, grouped / one);
  }
  return engine.use_adapter(engine.default_adapter()).ok();
}

}  // namespace

int main(int argc, char** argv) {
  kb::EngineOptions engine_options;
  std::vector<int64_t> counts = {1, 2, 4, 8};
  int64_t context = 1024, max_tokens = 64;
  int64_t blocks = 20, block_tokens = 35;  // a Hold'em decision's changed blocks, about
  int reps = 2;
  int64_t adapters = 0;
  std::string plot = "bench_sessions.png";
  CLI::App app{"Several sessions' answers decoded together (one pass a step for all) vs one session after another."};
  kb::add_engine_options(app, engine_options);
  app.add_option("--sessions", counts, "session counts to measure")->delimiter(',')->capture_default_str();
  app.add_option("--context", context, "tokens each session's cache holds before its answer")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->capture_default_str();
  app.add_option("--max-tokens", max_tokens, "most tokens of an answer")->check(CLI::Range(8, 512))->capture_default_str();
  app.add_option("--blocks", blocks, "changed blocks a session encodes (the encoding table)")
      ->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--block-tokens", block_tokens, "tokens a block")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--reps", reps, "repetitions; each way's best is kept")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--adapters", adapters, "also: the sessions spread over this many LoRA adapters, grouped by "
                                         "adapter as the engine answers them (0: not measured)")
      ->check(CLI::Range(0, 16))->capture_default_str();
  app.add_option("--plot", plot, "PNG to write (empty: none)")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, engine_options.threads);
  auto loaded = kb::load_engine(engine_options, "bench_sessions", context + max_tokens);
  if (!loaded) return kvframe::kExitBadInput;
  rt::Engine& engine = **loaded;
  const rt::Model& model = engine.model();
  auto schema = engine.schemas().get(kSchema);
  if (!schema) {
    std::fprintf(stderr, "bench_sessions: the schema does not compile: %s\n", schema.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }
  rt::GenerateParams params;
  params.schema = *schema;
  params.max_tokens = static_cast<int32_t>(max_tokens);
  params.stop_tokens = engine.stop_tokens();

  if (auto checked = rt::Decoder::check(params); !checked.ok()) {
    std::fprintf(stderr, "bench_sessions: %s\n", checked.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }
  std::vector<Row> rows;
  for (const int64_t n : counts) {
    Sessions sessions = prepared(model, n, context, max_tokens, 7);
    Row row;
    row.sessions = n;
    row.alone = row.together = 1e30;
    for (int rep = 0; rep < reps; ++rep) {
      std::vector<std::vector<rt::TokenId>> alone_tokens;
      rewind(sessions, context);
      Clock::time_point start = Clock::now();
      row.passes_alone = 0;
      for (int64_t s = 0; s < n; ++s) {
        rt::Decoder decoder(engine.tokenizer(), params);
        rt::GenerateStats stats;
        if (auto decoded = rt::decode(model, sessions.caches[s], sessions.first_logits[s], decoder, stats);
            !decoded.ok()) {
          std::fprintf(stderr, "bench_sessions: %s\n", decoded.error().to_string().c_str());
          return kvframe::kExitFailed;
        }
        alone_tokens.push_back(decoder.finish().tokens);
        row.passes_alone += stats.decode_steps;
      }
      row.alone = std::min(row.alone, std::chrono::duration<double>(Clock::now() - start).count());

      rewind(sessions, context);
      std::vector<rt::Decoder> decoders;
      for (int64_t s = 0; s < n; ++s) decoders.emplace_back(engine.tokenizer(), params);
      std::vector<rt::DecodingSequence> together;
      for (int64_t s = 0; s < n; ++s) {
        together.push_back({&sessions.caches[s], sessions.first_logits[s], &decoders[s], {}, {}});
      }
      start = Clock::now();
      if (auto decoded = rt::decode_together(model, together); !decoded.ok()) {
        std::fprintf(stderr, "bench_sessions: %s\n", decoded.error().to_string().c_str());
        return kvframe::kExitFailed;
      }
      row.together = std::min(row.together, std::chrono::duration<double>(Clock::now() - start).count());
      row.tokens = 0;
      row.passes_together = 0;
      for (int64_t s = 0; s < n; ++s) {
        const std::vector<rt::TokenId> tokens = decoders[s].finish().tokens;
        row.same = row.same && tokens == alone_tokens[s];
        row.tokens += static_cast<int64_t>(tokens.size());
        row.passes_together = std::max(row.passes_together, together[s].stats.decode_steps);
      }
    }
    std::fprintf(stderr, "[bench] %lld sessions done\n", static_cast<long long>(n));
    rows.push_back(row);
  }

  std::printf("%s · %s · %lld context tokens a session, answers under one JSON Schema, best of %d\n",
              model.config().name.c_str(), rt::cpu_backend_description().c_str(), static_cast<long long>(context), reps);
  std::printf("%8s %8s %12s %12s %10s %12s %14s %9s %6s\n", "sessions", "tokens", "alone s", "together s", "speedup",
              "alone tok/s", "together tok/s", "passes", "same");
  std::vector<double> xs, alone_rate, together_rate;
  for (const Row& r : rows) {
    std::printf("%8lld %8lld %12.3f %12.3f %9.2fx %12.1f %14.1f %4lld/%-4lld %6s\n", static_cast<long long>(r.sessions),
                static_cast<long long>(r.tokens), r.alone, r.together, r.alone / r.together,
                static_cast<double>(r.tokens) / r.alone, static_cast<double>(r.tokens) / r.together,
                static_cast<long long>(r.passes_together), static_cast<long long>(r.passes_alone), r.same ? "yes" : "NO");
    xs.push_back(static_cast<double>(r.sessions));
    alone_rate.push_back(static_cast<double>(r.tokens) / r.alone);
    together_rate.push_back(static_cast<double>(r.tokens) / r.together);
  }
  std::printf("(passes: model passes together / one after another; same: every answer token-identical)\n");
  if (adapters > 0 && !adapter_table(engine, params, counts, adapters, context, max_tokens, reps)) {
    std::fprintf(stderr, "bench_sessions: the adapter table failed\n");
    return kvframe::kExitFailed;
  }

  std::printf("\nencoding %lld blocks of %lld tokens a session: a call per session vs one call for all, best of %d\n",
              static_cast<long long>(blocks), static_cast<long long>(block_tokens), reps);
  std::printf("%8s %8s %12s %12s %10s %12s %14s\n", "sessions", "tokens", "alone s", "together s", "speedup",
              "alone tok/s", "together tok/s");
  for (const int64_t n : counts) {
    std::vector<std::vector<std::vector<int32_t>>> dirty(static_cast<size_t>(n));
    std::mt19937 rng(static_cast<uint32_t>(11 + n));
    std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(model.config().n_vocab) - 1);
    std::vector<std::vector<int32_t>> all;
    for (auto& session : dirty) {
      session.assign(static_cast<size_t>(blocks), std::vector<int32_t>(static_cast<size_t>(block_tokens)));
      for (auto& block : session) {
        for (auto& t : block) t = id(rng);
        all.push_back(block);
      }
    }
    double alone = 1e30, together = 1e30;
    for (int rep = 0; rep < reps; ++rep) {
      Clock::time_point start = Clock::now();
      for (const auto& session : dirty) {
        if (!model.encode_blocks(session)) return kvframe::kExitFailed;
      }
      alone = std::min(alone, std::chrono::duration<double>(Clock::now() - start).count());
      start = Clock::now();
      if (!model.encode_blocks(all)) return kvframe::kExitFailed;
      together = std::min(together, std::chrono::duration<double>(Clock::now() - start).count());
    }
    const double tokens = static_cast<double>(n * blocks * block_tokens);
    std::printf("%8lld %8.0f %12.3f %12.3f %9.2fx %12.1f %14.1f\n", static_cast<long long>(n), tokens, alone, together,
                alone / together, tokens / alone, tokens / together);
  }
  bool same = true;
  for (const Row& r : rows) same = same && r.same;
  if (!plot.empty()) {
    kvframe::plot::PlotOptions options;
    options.title = "Sessions decoding together vs one after another (" + model.config().name + ", CPU)";
    options.x = {"sessions", 2, "*:*"};
    options.y = {"answer tokens / s, all sessions", 0, "0:*"};
    options.key = "top left";
    if (kvframe::plot::write_plot(plot, options, {{"one after another (decode)", xs, alone_rate},
                                                  {"together (decode_together)", xs, together_rate}})) {
      std::fprintf(stderr, "plot: %s\n", plot.c_str());
    }
  }
  return same ? kvframe::kExitOk : kvframe::kExitCheckFailed;
}
