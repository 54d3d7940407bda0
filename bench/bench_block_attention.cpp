// bench_block_attention: the seeds' Table 3 (block-attention-v2, §3.6) on this
// engine — time and FLOPs to the first token of a 50-token query (the final
// block) over a context of 512 .. 32K tokens, `full` attention against `block`
// attention with every block already encoded and cached.
//
// Method, per total length L (prefix + blocks + query ≈ L):
//   frame   a synthetic gamecore JSON document, {"units": [entity, ...]}, of
//           ~45-token entity objects, sized by tokenizing its blocks'
//           "<id>: <json>\n" texts; the real counts come from QueryReport
//           (context_tokens, query_tokens) and are what the table prints.
//   full    one Session in AttentionMode::kFull: each query prefills the whole
//           prompt from scratch; TTFT = median of --reps queries.
//   block   one Session in AttentionMode::kBlock on the same frame: one query
//           encodes every block (the cold "encode all" column), then --reps
//           queries on the unchanged frame reuse all of them; TTFT = median.
//   The two modes' repetitions alternate so that both see the same machine load;
//   their ratio in one run is the figure to compare (the CPU is shared).
//   TTFT is QueryReport::ms.first_token (partition .. first sampled token).
//
// FLOPs to first token, analytic from the model's shape, for the tokens each
// query actually ran through the model (QueryReport):
//   2 x (layer matmul parameters) x tokens run     projections + MLP
//   + 4 x n_layer x n_head x head_dim x Σ keys     QK^T and AV, Σ over the tokens
//                                                  run of the keys each one sees
//   + 2 x n_vocab x n_embd                         the head, for the last token only
// full runs T = context + query tokens causally: Σ keys = T(T+1)/2.
// block runs the q query tokens over C cached context tokens: Σ keys = qC + q(q+1)/2
// (plus any tokens it had to encode; none when every block is cached).
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gnuplot_plot.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/runtime_tokenizer/chat_template.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/default_model/default_model.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_engine/session.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"
#include "engine_setup.h"
#include "model_shapes.h"

namespace {

namespace rt = kvframe::runtime;
namespace jb = kvframe::json_blocker;

constexpr const char* kFooter =
    "--shape runs a random-weight model of a real architecture's shape (e.g. Llama-3-8B on a GPU:\n"
    "  --shape llama3-8b --device cuda --dtype bf16 --lengths 512,1024,2048,4096,8192,16384,32768).\n"
    "  A random-weight model has no tokenizer: the tokenizer and chat template come from --model's\n"
    "  GGUF file, and the shape's n_vocab is set to that tokenizer's (49,152 for the default model,\n"
    "  instead of 128,256: the head is a little smaller than the real model's; it runs for one token).\n"
    "\n"
    "Exit status: 0 ok; 1 usage error; 2 the model or a frame cannot be used; 3 the device is\n"
    "unavailable or the engine failed (the message is printed on stderr).\n"
    "\n"
    "The default model is fetched by scripts/fetch-model.sh.";

struct Options {
  kvframe::bench::EngineOptions engine;
  std::vector<int64_t> lengths = {512, 1024, 2048, 4096, 8192};
  int64_t query_tokens = 50;
  int reps = 3;
  std::string plot = "bench_block_attention.png";
  bool json = false;
};

// Deterministic values for the synthetic frame.
struct Lcg {
  uint64_t state;
  uint32_t next(uint32_t bound) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>((state >> 33) % bound);
  }
};

// {"units":[...]}: n entity objects with an "id" each, so that (default
// rules) every entity is one block, "units[id=u42]: {...}" (~40 tokens).
std::string make_frame(int64_t entities) {
  static const char* kTypes[] = {"creep", "archer", "golem", "wolf", "wisp", "knight"};
  Lcg rng{12345};
  std::string out = "{\"units\":[";
  char buffer[256];
  for (int64_t i = 0; i < entities; ++i) {
    std::snprintf(buffer, sizeof buffer, "%s{\"id\":\"u%lld\",\"type\":\"%s\",\"team\":\"%s\",\"hp\":%u,\"x\":%u,\"y\":%u}",
                  i ? "," : "", static_cast<long long>(i), kTypes[rng.next(6)], rng.next(2) ? "red" : "blue",
                  rng.next(900) + 100, rng.next(1000), rng.next(1000));
    out += buffer;
  }
  return out + "]}";
}

// Tokens of the frame's blocks as the engine lays them out ("<id>: <json>\n",
// each tokenized on its own), and the block count.
std::optional<std::pair<int64_t, int64_t>> frame_tokens(const rt::Tokenizer& tokenizer, const std::string& frame) {
  auto partition = jb::partition(frame);
  if (!partition) return std::nullopt;
  int64_t tokens = 0;
  for (const jb::Block& block : partition->blocks()) {
    tokens += static_cast<int64_t>(tokenizer.encode(std::string(block.text) + "\n").size());
  }
  return std::make_pair(tokens, static_cast<int64_t>(partition->size()));
}

// An instruction of about n tokens (a game's query: what to do now).
std::string instruction_of(const rt::Tokenizer& tokenizer, int64_t n) {
  static const std::string kText =
      "You are the commander of the blue team. Read the state of every unit above and decide the next move: "
      "name the three enemy units that are the most dangerous right now, say which of our units should attack "
      "each of them, which units should retreat to heal, and where the team should gather for the next fight. "
      "Answer in one short paragraph, without repeating the data, and keep the plan simple enough to follow "
      "at once. Then list the orders unit by unit, one line each, most urgent first, and finish with a single "
      "sentence on what the enemy is most likely to do next.";
  std::vector<rt::TokenId> ids = tokenizer.encode(kText);
  while (static_cast<int64_t>(ids.size()) < n) {
    std::vector<rt::TokenId> more = tokenizer.encode(" " + kText);
    ids.insert(ids.end(), more.begin(), more.end());
  }
  ids.resize(static_cast<size_t>(std::max<int64_t>(n, 1)));
  return tokenizer.decode(ids);
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// Median of each stage over the repetitions (the first-token stages).
nlohmann::json stage_medians(const std::vector<rt::StageTimes>& times) {
  auto stage = [&](double rt::StageTimes::*field) {
    std::vector<double> v;
    for (const rt::StageTimes& t : times) v.push_back(t.*field);
    return median(v);
  };
  return {{"partition", stage(&rt::StageTimes::partition)},   {"tokenize", stage(&rt::StageTimes::tokenize)},
          {"encode", stage(&rt::StageTimes::encode)},         {"reposition", stage(&rt::StageTimes::reposition)},
          {"query_prefill", stage(&rt::StageTimes::query_prefill)}, {"first_token", stage(&rt::StageTimes::first_token)}};
}

struct Flops {
  double layer_params, head, attention_unit;
  explicit Flops(const rt::ModelConfig& c)
      : layer_params(static_cast<double>(c.matmul_params() - c.n_vocab * c.n_embd)),
        head(2.0 * static_cast<double>(c.n_vocab * c.n_embd)),
        attention_unit(4.0 * static_cast<double>(c.n_layer * c.n_head * c.head_dim)) {}
  // `run` new tokens after `before` visible ones, each seeing the ones before it.
  double causal(double before, double run) const {
    return 2.0 * layer_params * run + attention_unit * (run * before + run * (run + 1) / 2.0) + head;
  }
};

struct Row {
  int64_t target = 0;
  int64_t blocks = 0, context_tokens = 0, query_tokens = 0;
  double ttft_full = 0, ttft_block = 0;  // ms, medians
  double flops_full = 0, flops_block = 0;
  double encode_all_ms = 0;          // the block session's cold query: every block encoded
  int64_t encode_all_tokens = 0;
  int64_t block_blocks_encoded = 0;  // blocks encoded in the timed block queries (expected 0)
  int64_t block_tokens_encoded = 0;  // QueryReport::tokens_encoded of those queries (final block included)
  bool same_first_token = false;  // greedy first token of full == of block (last rep)
  double max_logit_diff = std::nan("");  // max |full - block| over the first token's logits (last rep)
  std::vector<double> full_ms, block_ms;
  std::vector<rt::StageTimes> full_stages, block_stages;
};

int engine_fail(const kvframe::Error& error, const char* doing) {
  std::fprintf(stderr, "bench_block_attention: %s: %s\n", doing, error.to_string().c_str());
  return kvframe::exit_code(error.code);
}

// One query; its answer, or the error printed and nullopt.
std::optional<rt::Answer> query(rt::Session& session, const std::string& instruction, const char* what) {
  rt::Task task;
  task.instruction = instruction;
  task.generate.max_tokens = 1;  // the first token is all Table 3 measures
  auto answer = session.query(task);
  if (!answer) {
    std::fprintf(stderr, "bench_block_attention: %s query: %s\n", what, answer.error().to_string().c_str());
    return std::nullopt;
  }
  return std::move(answer).value();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Time and FLOPs to the first token of a 50-token query, full attention vs block attention with the "
      "context's blocks cached, by total context length (the block-attention paper's Table 3)."};
  app.footer(kFooter);
  kvframe::bench::add_engine_options(app, o.engine);
  app.add_option("--lengths", o.lengths, "total context lengths in tokens (prefix + blocks + query), comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{64}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--query-tokens", o.query_tokens, "tokens of the query (the final block)")
      ->check(CLI::Range(int64_t{8}, int64_t{4096}))
      ->capture_default_str();
  app.add_option("--reps", o.reps, "timed queries per mode and length (the median is reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--plot", o.plot, "write a PNG plot of TTFT against length here (empty: none)")->capture_default_str();
  app.add_flag("--json", o.json, "print the results as JSON on stdout instead of the table");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, o.engine.threads);

  auto loaded = kvframe::bench::load_engine(o.engine, "bench_block_attention",
                                            *std::max_element(o.lengths.begin(), o.lengths.end()));
  if (!loaded) return kvframe::exit_code(loaded.error().code);
  std::unique_ptr<rt::Engine> engine = std::move(loaded).value();
  const rt::ModelConfig& config = engine->model().config();
  const rt::Tokenizer& tokenizer = engine->tokenizer();
  const Flops flops(config);

  // Prefix tokens, estimated to size the frames (the engine's own count is
  // what is printed): the chat template's system turn and user header.
  int64_t prefix_estimate = 0;
  if (engine->chat_template()) {
    prefix_estimate = static_cast<int64_t>(
        tokenizer.encode(engine->chat_template()->render({{"user", ""}}, /*add_generation_prompt=*/false)).size());
  }
  // Tokens per entity block, from a sample frame.
  const int64_t sample_entities = 64;
  const auto sample = frame_tokens(tokenizer, make_frame(sample_entities));
  if (!sample) {
    std::fprintf(stderr, "bench_block_attention: the synthetic frame does not partition (a bug here)\n");
    return kvframe::kExitBadInput;
  }
  const double per_entity = static_cast<double>(sample->first) / static_cast<double>(sample_entities);
  std::fprintf(stderr, "[bench] synthetic frame: %.1f tokens per entity block; prefix ~%lld tokens\n", per_entity,
               static_cast<long long>(prefix_estimate));

  std::vector<Row> rows;
  std::string instruction = instruction_of(tokenizer, o.query_tokens);
  for (int64_t target : o.lengths) {
    Row row;
    row.target = target;
    // Entities so that prefix + blocks + query ≈ target, refined on the real count.
    const int64_t blocks_target = std::max<int64_t>(target - prefix_estimate - o.query_tokens, 1);
    int64_t entities = std::max<int64_t>(1, std::llround(static_cast<double>(blocks_target) / per_entity));
    std::string frame = make_frame(entities);
    for (int i = 0; i < 3; ++i) {
      const auto counted = frame_tokens(tokenizer, frame);
      if (!counted) break;
      const int64_t off = blocks_target - counted->first;
      const int64_t step = std::llround(static_cast<double>(off) / per_entity);
      if (step == 0) break;
      entities = std::max<int64_t>(1, entities + step);
      frame = make_frame(entities);
    }
    const auto counted = frame_tokens(tokenizer, frame);
    const int64_t context = (prefix_estimate + (counted ? counted->first : blocks_target) + o.query_tokens) * 9 / 8 + 128;

    rt::SessionParams full_params, block_params;
    full_params.mode = rt::AttentionMode::kFull;
    block_params.mode = rt::AttentionMode::kBlock;
    full_params.context = block_params.context = context;
    auto full = rt::Session::open(*engine, full_params);
    if (!full) return engine_fail(full.error(), "opening the full session");
    auto block = rt::Session::open(*engine, block_params);
    if (!block) return engine_fail(block.error(), "opening the block session");
    for (rt::Session* s : {full->get(), block->get()}) {
      auto diff = s->update(frame);
      if (!diff) {
        std::fprintf(stderr, "bench_block_attention: frame rejected: %s\n", diff.error().to_string().c_str());
        return kvframe::kExitBadInput;
      }
    }

    // Cold: the block session encodes every block.
    std::fprintf(stderr, "[bench] %lld: block session encodes all %lld entity blocks\n", static_cast<long long>(target),
                 static_cast<long long>(entities));
    auto cold_answer = query(**block, instruction, "block (cold)");
    if (!cold_answer) return kvframe::kExitFailed;
    std::optional<rt::QueryReport> cold = cold_answer->report;
    row.encode_all_ms = cold->ms.first_token;
    row.encode_all_tokens = cold->tokens_encoded;
    // The query's own length: adjust the instruction until the final block is
    // --query-tokens long (the template adds its end-of-turn and assistant header).
    for (int i = 0; i < 3 && cold->query_tokens != o.query_tokens; ++i) {
      const int64_t want = static_cast<int64_t>(tokenizer.encode(instruction).size()) + o.query_tokens - cold->query_tokens;
      if (want < 1) break;
      instruction = instruction_of(tokenizer, want);
      cold_answer = query(**block, instruction, "block (calibrating the query)");
      if (!cold_answer) return kvframe::kExitFailed;
      cold = cold_answer->report;
    }

    for (int r = 0; r < o.reps; ++r) {
      std::fprintf(stderr, "[bench] %lld: rep %d/%d: full prefill", static_cast<long long>(target), r + 1, o.reps);
      auto full_answer = query(**full, instruction, "full");
      if (!full_answer) return kvframe::kExitFailed;
      const rt::QueryReport* f = &full_answer->report;
      std::fprintf(stderr, " %.0f ms; block ", f->ms.first_token);
      auto block_answer = query(**block, instruction, "block");
      if (!block_answer) return kvframe::kExitFailed;
      const rt::QueryReport* b = &block_answer->report;
      // How far block attention's first-token distribution is from full's
      // (the model is not fine-tuned for block attention: a report, not a check).
      const at::Tensor& fl = full_answer->first_logits;
      const at::Tensor& bl = block_answer->first_logits;
      if (fl.defined() && bl.defined() && fl.sizes() == bl.sizes()) {
        row.same_first_token = fl.argmax().item<int64_t>() == bl.argmax().item<int64_t>();
        row.max_logit_diff = (fl - bl).abs().max().item<double>();
      }
      std::fprintf(stderr, "%.1f ms\n", b->ms.first_token);
      row.full_ms.push_back(f->ms.first_token);
      row.block_ms.push_back(b->ms.first_token);
      row.blocks = b->blocks_total;
      row.context_tokens = b->context_tokens;
      row.query_tokens = b->query_tokens;
      row.full_stages.push_back(f->ms);
      row.block_stages.push_back(b->ms);
      row.block_blocks_encoded = std::max(row.block_blocks_encoded, b->blocks_encoded);
      row.block_tokens_encoded = std::max(row.block_tokens_encoded, b->tokens_encoded);
      if (f->context_tokens != b->context_tokens || f->query_tokens != b->query_tokens) {
        std::fprintf(stderr,
                     "[bench] WARNING: the modes read different prompts: full %lld + %lld tokens, block %lld + %lld\n",
                     static_cast<long long>(f->context_tokens), static_cast<long long>(f->query_tokens),
                     static_cast<long long>(b->context_tokens), static_cast<long long>(b->query_tokens));
      }
      if (b->blocks_encoded != 0) {
        std::fprintf(stderr, "[bench] WARNING: block mode encoded %lld blocks (%lld tokens) on an unchanged frame\n",
                     static_cast<long long>(b->blocks_encoded), static_cast<long long>(b->tokens_encoded));
      }
    }
    row.ttft_full = median(row.full_ms);
    row.ttft_block = median(row.block_ms);
    const auto C = static_cast<double>(row.context_tokens), q = static_cast<double>(row.query_tokens);
    row.flops_full = flops.causal(0, C + q);
    // Should block mode have encoded blocks (none expected), the tokens it
    // reports are counted as if each saw the whole context: an upper bound,
    // flagged in the output.
    const auto e = row.block_blocks_encoded ? static_cast<double>(row.block_tokens_encoded) - q : 0.0;
    row.flops_block = flops.causal(C, q) + 2.0 * flops.layer_params * e + flops.attention_unit * e * C;
    rows.push_back(row);
  }

  if (o.json) {
    nlohmann::json out;
    out["model"] = config.name;
    out["device"] = o.engine.device;
    out["dtype"] = at::toString(engine->model().dtype());
    out["backend"] = rt::cpu_backend_description();
    out["reps"] = o.reps;
    out["rows"] = nlohmann::json::array();
    for (const Row& r : rows) {
      out["rows"].push_back({{"target", r.target},
                             {"blocks", r.blocks},
                             {"context_tokens", r.context_tokens},
                             {"query_tokens", r.query_tokens},
                             {"tokens", r.context_tokens + r.query_tokens},
                             {"ttft_full_ms", r.ttft_full},
                             {"ttft_block_ms", r.ttft_block},
                             {"ttft_full_ms_all", r.full_ms},
                             {"ttft_block_ms_all", r.block_ms},
                             {"block_over_full", r.ttft_block / r.ttft_full},
                             {"flops_full", r.flops_full},
                             {"flops_block", r.flops_block},
                             {"flop_reduction", 1.0 - r.flops_block / r.flops_full},
                             {"encode_all_ms", r.encode_all_ms},
                             {"encode_all_tokens", r.encode_all_tokens},
                             {"same_first_token", r.same_first_token},
                             {"max_logit_diff", r.max_logit_diff},
                             {"block_blocks_encoded", r.block_blocks_encoded},
                             {"block_tokens_encoded_reported", r.block_tokens_encoded},
                             {"full_stages_ms", stage_medians(r.full_stages)},
                             {"block_stages_ms", stage_medians(r.block_stages)}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("\n%s · %s %s · %s · median of %d · query %lld tokens\n", config.name.c_str(), o.engine.device.c_str(),
                at::toString(engine->model().dtype()), rt::cpu_backend_description().c_str(), o.reps,
                rows.empty() ? 0LL : static_cast<long long>(rows.front().query_tokens));
    std::printf("%7s %7s %6s %12s %12s %8s %10s %10s %9s %14s %8s %11s\n", "length", "tokens", "blocks",
                "TTFT full ms", "TTFT block ms", "block/full", "FLOPs full", "FLOPs block", "FLOP red.", "encode all ms",
                "same 1st", "max|dlogit|");
    bool flagged = false;
    for (const Row& r : rows) {
      flagged = flagged || r.block_blocks_encoded != 0;
      std::printf("%7lld %7lld %6lld %12.1f %13.1f %9.3f %10.2e %10.2e%s %8.1f%% %14.0f %8s %11.3g\n",
                  static_cast<long long>(r.target), static_cast<long long>(r.context_tokens + r.query_tokens),
                  static_cast<long long>(r.blocks), r.ttft_full, r.ttft_block, r.ttft_block / r.ttft_full,
                  r.flops_full, r.flops_block, r.block_blocks_encoded ? "*" : " ",
                  100.0 * (1.0 - r.flops_block / r.flops_full), r.encode_all_ms, r.same_first_token ? "yes" : "no",
                  r.max_logit_diff);
    }
    std::printf("tokens: prefix + blocks + query as the engine counted them; encode all: the block session's\n"
                "first query (every block encoded, then the query), once per length; same 1st, max|dlogit|: block's\n"
                "first-token logits against full's in the last repetition (with one block they should agree).\n");
    if (flagged) {
      std::printf("* block mode encoded blocks on an unchanged frame; counted as an upper bound (see stderr)\n");
    }
  }

  if (!o.plot.empty()) {
    kvframe::plot::PlotSeries full_line{"full (prefill every query)", {}, {}, false, "linespoints lw 2 pt 7"};
    kvframe::plot::PlotSeries block_line{"block (all blocks cached)", {}, {}, false, "linespoints lw 2 pt 5"};
    for (const Row& r : rows) {
      const auto tokens = static_cast<double>(r.context_tokens + r.query_tokens);
      full_line.x.push_back(tokens);
      full_line.y.push_back(r.ttft_full);
      block_line.x.push_back(tokens);
      block_line.y.push_back(r.ttft_block);
    }
    kvframe::plot::PlotOptions options;
    options.title = "time to first token, " + std::to_string(rows.empty() ? 0 : rows.front().query_tokens) +
                    "-token query · " + config.name + " · " + o.engine.device + " " + at::toString(engine->model().dtype());
    options.x = {"context tokens (prefix + blocks + query)", 2, "*:*"};
    options.y = {"TTFT (ms, median)", 10, "*:*"};
    options.key = "top left";
    if (kvframe::plot::write_plot(o.plot, options, {full_line, block_line})) {
      std::fprintf(stderr, "[bench] plot: %s\n", o.plot.c_str());
    } else {
      std::fprintf(stderr, "[bench] no plot: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox)\n");
    }
  }
  return kvframe::kExitOk;
}
