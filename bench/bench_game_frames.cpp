// bench_game_frames: the game case (block-attention-v2, Appendix A) — a MOBA
// match's frames, each a whole gamecore JSON document of about --tokens tokens
// once blocked, answered by three Sessions side by side on the same frames:
//
//   full    the whole prompt prefilled from scratch every query (the baseline)
//   prefix  the longest unchanged token prefix of its previous query reused
//           (what games get today from llama.cpp's prompt cache)
//   block   only new or changed blocks encoded; everything else reused
//
// Per frame a mode runs on, its session gets update(frame) then one query: a
// ~30-token instruction, --max-tokens greedy tokens. Recorded per query:
// QueryReport::ms.first_token (TTFT), ms.total (query latency: TTFT + decoding),
// tokens_encoded, the frame diff's dirty blocks, and (block) the assembly stats.
//
// Sampling the baselines: a full prefill of an 8K-token frame takes tens of
// seconds on a 2-core CPU, so full and prefix run on every --full-every /
// --prefix-every frame only (block runs on every frame). A prefix cache changes
// only when its session is queried, so a prefix session queried every Nth
// frame reuses what is left of its prompt after N frames of changes: that is
// how a game querying that often would use it, and it is what is measured
// (pessimistic against a game that queries prefix mode every frame). Baseline
// sessions are given only the frames they answer (update() is whole-frame), so
// their TTFT holds one frame's partition, as block mode's does.
//
// Frame 0 is every session's cold start and is reported on its own line; the
// percentiles are over frames 1 .. --frames-1.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine_setup.h"
#include "gnuplot_plot.h"
#include "sample_stats.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/cli_options/fidelity_options.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/rules.h"
#include "kvframe/kv_diff/assembled_kv.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/default_model/default_model.h"
#include "kvframe/runtime_engine/session.h"
#include "moba/moba_stream.h"

namespace {

namespace rt = kvframe::runtime;
namespace jb = kvframe::json_blocker;
namespace moba = kvframe::examples::moba;
using kvframe::bench::mean;
using kvframe::bench::percentile;

constexpr const char* kFooter =
    "--full-every 0 (auto): every frame on cuda; on cpu every max(1, min(20, T/400))th frame, T the blocked\n"
    "tokens of frame 0 (every 20th at 8192). --prefix-every 0: every frame, as block mode (with the rules'\n"
    "volatile_last order a prefix cache keeps the stable part; answering less often would charge it N\n"
    "frames of changes per query). Frame 0 always runs in every mode (cold start, reported apart).\n"
    "\n"
    "--shape runs a random-weight model of a real architecture's shape with --model's tokenizer (for GPU\n"
    "timings, e.g. --shape llama3-8b --device cuda --tokens 32768): its timings are real, its answers noise.\n"
    "\n"
    "Exit status: 0 ok; 1 usage error; 2 the model, rules or a frame cannot be used; 3 the device\n"
    "is unavailable or the engine failed (the message is printed on stderr).\n"
    "\n"
    "The default model is fetched by scripts/fetch-model.sh.";

constexpr int kModes = 3;
constexpr std::array<rt::AttentionMode, kModes> kModeOrder = {rt::AttentionMode::kFull, rt::AttentionMode::kPrefix,
                                                              rt::AttentionMode::kBlock};

// The stages of block mode's time to first token, reported by their medians.
struct Stage {
  const char* name;
  double rt::StageTimes::*field;
};
constexpr std::array<Stage, 5> kStages = {{{"partition", &rt::StageTimes::partition},
                                          {"tokenize", &rt::StageTimes::tokenize},
                                          {"encode", &rt::StageTimes::encode},
                                          {"reposition", &rt::StageTimes::reposition},
                                          {"query prefill", &rt::StageTimes::query_prefill}}};

struct Options {
  kvframe::bench::EngineOptions engine;  // --model, --shape, --device, --dtype, --lora, --threads
  std::string rules = KVFRAME_MOBA_RULES_FILE;
  std::vector<std::string> drop;
  std::string order = "volatile_last";
  int frames = 200;
  int64_t tokens = 8192;
  double change = 0.01;
  uint64_t seed = 1;
  int full_every = 0, prefix_every = 0;
  int32_t max_tokens = 20;
  std::string instruction = moba::kCasterInstruction;
  std::string layout = "auto";
  bool blocks_after_prefix = rt::SessionParams{}.blocks_after_prefix;
  int64_t context = 0;
  std::string plot = "bench_game_frames.png";
  bool json = false;
  bool warm = false;
  kvframe::common::BlockFidelity fidelity;  // --block-heads, --blend, --block-temperature
};

// One query's measurements.
struct Query {
  double ttft = 0, total = 0;  // ms
  int64_t tokens_encoded = 0, blocks_encoded = 0, blocks_total = 0, context_tokens = 0, query_tokens = 0;
  int64_t generated = 0;
  size_t dirty = 0;  // changed + added blocks in the frame diff since this session's previous query
  int64_t first_token = -1;  // argmax of the first token's logits
  at::Tensor log_probs;      // log-softmax of the first token's logits, for KL against full
  std::vector<rt::TokenId> tokens;
  std::string text;
  kvframe::kv_diff::AssembleStats assembly;
  rt::StageTimes ms;  // where the time to first token went
  double warm_ms = 0;  // --warm: Session::warm() before the query (not in ttft)
};

struct FrameRow {
  uint64_t frame = 0;
  double changed_fraction = 0;  // dirty blocks / current blocks, from the block session's diff
  std::array<std::optional<Query>, kModes> q;
};

moba::StreamParams scaled(double s, const Options& o) { return moba::scaled_params(s, o.seed, o.change); }

// Stream parameters whose first frame blocks to about `target` tokens, found by
// measuring (bisection on the population scale). Returns them and the tokens.
std::pair<moba::StreamParams, int64_t> size_stream(const rt::Tokenizer& tokenizer, const jb::Rules& rules,
                                                   const Options& o) {
  auto measure = [&](double s) {
    moba::StreamGenerator generator(scaled(s, o));
    return kvframe::bench::blocked_tokens(tokenizer, rules, generator.next().json).value_or(0);
  };
  double lo = 0.0, hi = 1.0;
  while (measure(hi) < o.tokens && hi < 64) hi *= 2;
  std::pair<moba::StreamParams, int64_t> best{scaled(hi, o), measure(hi)};
  for (int i = 0; i < 14; ++i) {
    const double mid = (lo + hi) / 2;
    const int64_t n = measure(mid);
    if (std::llabs(n - o.tokens) < std::llabs(best.second - o.tokens)) best = {scaled(mid, o), n};
    (n < o.tokens ? lo : hi) = mid;
  }
  return best;
}

// A table cell: the number, or "-" where nothing was measured (NaN).
std::string cell(double v, int precision) {
  if (std::isnan(v)) return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", precision, v);
  return buffer;
}

int engine_fail(const kvframe::Error& error, const char* doing) {
  std::fprintf(stderr, "bench_game_frames: %s: %s\n", doing, error.to_string().c_str());
  return kvframe::exit_code(error.code);
}

struct ModeSummary {
  int queried = 0;  // frames >= 1
  double ttft_p50, ttft_p99, total_p50, total_p99, tokens_encoded, blocks_encoded, dirty, generated;
};

ModeSummary summarize(const std::vector<FrameRow>& rows, int m) {
  std::vector<double> ttft, total, encoded, blocks, dirty, generated;
  for (const FrameRow& r : rows) {
    if (r.frame == 0 || !r.q[m]) continue;
    const Query& q = *r.q[m];
    ttft.push_back(q.ttft);
    total.push_back(q.total);
    encoded.push_back(static_cast<double>(q.tokens_encoded));
    blocks.push_back(static_cast<double>(q.blocks_encoded));
    dirty.push_back(static_cast<double>(q.dirty));
    generated.push_back(static_cast<double>(q.generated));
  }
  return {static_cast<int>(ttft.size()), percentile(ttft, 50), percentile(ttft, 99), percentile(total, 50),
          percentile(total, 99), mean(encoded), mean(blocks), mean(dirty), mean(generated)};
}

// Agreement of mode `m` with full on the frames both ran (frame 0 included).
struct Agreement {
  int frames = 0, first_token = 0, text = 0;
  double kl = 0;  // mean KL(full || mode) of the first token's distribution, nats
};
Agreement agreement(const std::vector<FrameRow>& rows, int m) {
  Agreement a;
  for (const FrameRow& r : rows) {
    if (!r.q[0] || !r.q[m]) continue;
    ++a.frames;
    a.first_token += r.q[0]->first_token == r.q[m]->first_token;
    a.text += r.q[0]->tokens == r.q[m]->tokens;
    const at::Tensor& p = r.q[0]->log_probs;
    a.kl += (p.exp() * (p - r.q[m]->log_probs)).sum().item<double>();
  }
  if (a.frames) a.kl /= a.frames;
  return a;
}

// Median over the frames both ran of TTFT(m) / TTFT(base), frames >= 1.
double paired_ratio(const std::vector<FrameRow>& rows, int m, int base) {
  std::vector<double> ratios;
  for (const FrameRow& r : rows) {
    if (r.frame == 0 || !r.q[m] || !r.q[base]) continue;
    ratios.push_back(r.q[m]->ttft / r.q[base]->ttft);
  }
  return percentile(ratios, 50);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "A MOBA match's frames answered in full, prefix and block attention side by side: time to first token, "
      "query latency, tokens encoded, and agreement with full attention."};
  app.footer(kFooter);
  o.engine.game = "moba";  // --lora auto: the MOBA adapter where kvframe ships one
  kvframe::bench::add_engine_options(app, o.engine);
  app.add_option("--rules", o.rules, "json_blocker rules for the frames")->capture_default_str();
  app.add_option("--drop", o.drop,
                 "more paths for the rules to drop (comma-separated patterns), e.g. 'shop': the static item "
                 "catalog blocks to ~2.5K tokens, so frames below ~5.5K tokens need it gone")
      ->delimiter(',');
  app.add_option("--order", o.order,
                 "the order every mode's prompt reads the blocks in (rules \"order\"): volatile_last keeps the "
                 "blocks that change after the stable ones, prefix mode's best case; document as in the frame")
      ->check(CLI::IsMember({"document", "volatile_last"}))
      ->capture_default_str();
  app.add_option("--frames", o.frames, "frames of the match")->check(CLI::Range(2, 1000000))->capture_default_str();
  app.add_option("--tokens", o.tokens, "blocked tokens of a frame (the generator is sized by measuring)")
      ->check(CLI::Range(int64_t{256}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--change", o.change, "generator change rate: share of heroes, units and towers changed per frame")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "generator seed")->capture_default_str();
  app.add_option("--full-every", o.full_every, "full mode answers every Nth frame (0: auto, see below)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--prefix-every", o.prefix_every, "prefix mode answers every Nth frame (0: every frame)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-tokens", o.max_tokens, "greedy tokens per answer")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--instruction", o.instruction, "the query (final block)")->capture_default_str();
  app.add_option("--layout", o.layout,
                 "block mode's assembled-buffer layout (kv_diff); auto: compact on CUDA and for sliding-window models, slack on the CPU otherwise")
      ->check(CLI::IsMember({"auto", "slack", "compact"}))
      ->capture_default_str();
  app.add_option("--blocks-after-prefix", o.blocks_after_prefix,
                 "block mode encodes blocks after the system prompt (false: from position 0, alone)")
      ->default_str(o.blocks_after_prefix ? "true" : "false");
  kvframe::cli::add_fidelity_options(app, o.fidelity);
  app.add_option("--context", o.context, "KV tokens per session (0: frame tokens x 1.25 + query + answer)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--plot", o.plot, "write a PNG plot of per-frame TTFT here (empty: none)")->capture_default_str();
  app.add_flag("--warm", o.warm,
               "apply each frame ahead of its query (Session::warm, as kvframe-serve does while no request waits): "
               "TTFT then counts the query's own work, and the warm-up's time is reported apart");
  app.add_flag("--json", o.json, "print the summary and every frame's figures as JSON on stdout instead of tables");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, o.engine.threads);

  auto rules = jb::load_rules(o.rules);
  if (!rules) {
    std::fprintf(stderr, "bench_game_frames: --rules %s: %s\n", o.rules.c_str(), rules.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }
  rules->drop.insert(rules->drop.end(), o.drop.begin(), o.drop.end());
  rules->order = o.order == "document" ? jb::BlockOrder::kDocument : jb::BlockOrder::kVolatileLast;
  if (auto checked = jb::check_rules(*rules); !checked.ok()) {
    std::fprintf(stderr, "bench_game_frames: --drop: %s\n", checked.error().to_string().c_str());
    return kvframe::kExitUsage;
  }
  // A session holds about 1.25 frames (see --context): a random-weight shape
  // gets that much context whatever its trained length.
  auto loaded = kvframe::bench::load_engine(o.engine, "bench_game_frames", o.tokens * 2 + 4096);
  if (!loaded) return kvframe::exit_code(loaded.error().code);  // load_engine printed what failed and what to do
  rt::Engine& engine = **loaded;
  const rt::ModelConfig& config = engine.model().config();
  const bool cuda = engine.model().device().is_cuda();
  const std::string dtype_name = at::toString(engine.model().dtype());

  const auto [stream_params, frame0_tokens] = size_stream(engine.tokenizer(), *rules, o);
  std::fprintf(stderr, "[bench] stream: %d heroes, %d units, %d towers, %d events, change rate %.3f: frame 0 = %lld blocked tokens\n",
               stream_params.heroes, stream_params.units, stream_params.towers, stream_params.events,
               stream_params.change_rate, static_cast<long long>(frame0_tokens));
  if (std::llabs(frame0_tokens - o.tokens) * 10 > o.tokens) {
    std::fprintf(stderr, "[bench] WARNING: no population of the generator blocks to %lld tokens; the nearest is %lld%s\n",
                 static_cast<long long>(o.tokens), static_cast<long long>(frame0_tokens),
                 frame0_tokens > o.tokens && std::find(o.drop.begin(), o.drop.end(), "shop") == o.drop.end()
                     ? " (--drop shop removes the static item catalog, ~2.5K tokens)"
                     : "");
  }
  const int auto_every = cuda ? 1 : static_cast<int>(std::clamp<int64_t>(frame0_tokens / 400, 1, 20));
  const std::array<int, kModes> every = {o.full_every ? o.full_every : auto_every,
                                         o.prefix_every ? o.prefix_every : 1, 1};

  const auto layout = kvframe::kv_diff::parse_layout(o.layout);  // nullopt for auto
  if (!layout) o.layout = kvframe::kv_diff::layout_name(rt::default_layout(engine.model()));  // what the session picks
  const int64_t context =
      o.context ? o.context
                : frame0_tokens * 5 / 4 + static_cast<int64_t>(engine.tokenizer().encode(o.instruction).size()) +
                      o.max_tokens + 256;
  std::array<std::unique_ptr<rt::Session>, kModes> sessions;
  for (int m = 0; m < kModes; ++m) {
    rt::SessionParams params;
    params.mode = kModeOrder[m];
    params.rules = *rules;
    params.context = context;
    params.layout = layout;
    params.blocks_after_prefix = o.blocks_after_prefix;
    params.fidelity = o.fidelity;
    auto opened = rt::Session::open(engine, params);
    if (!opened) return engine_fail(opened.error(), "opening a session");
    sessions[m] = std::move(opened).value();
  }

  rt::Task task;
  task.instruction = o.instruction;
  task.generate.max_tokens = o.max_tokens;  // greedy: SamplingParams' default temperature 0

  moba::StreamGenerator generator(stream_params);
  std::vector<FrameRow> rows;
  for (int i = 0; i < o.frames; ++i) {
    const moba::Frame frame = generator.next();
    FrameRow row;
    row.frame = frame.number;
    std::string progress;
    for (int m = kModes - 1; m >= 0; --m) {  // block first: it sees every frame
      if (i % every[m] != 0) continue;
      auto diff = sessions[m]->update(frame.json);
      if (!diff) {
        std::fprintf(stderr, "bench_game_frames: frame %d rejected: %s\n", i, diff.error().to_string().c_str());
        return kvframe::kExitBadInput;
      }
      if (kModeOrder[m] == rt::AttentionMode::kBlock) {
        const size_t current = diff->blocks.size() - diff->removed;
        row.changed_fraction = current ? static_cast<double>(diff->dirty()) / static_cast<double>(current) : 0.0;
      }
      double warm_ms = 0;
      if (o.warm) {
        const auto start = std::chrono::steady_clock::now();
        if (auto warmed = sessions[m]->warm(); !warmed.ok()) {
          std::fprintf(stderr, "bench_game_frames: frame %d, %s mode, warming: %s\n", i,
                       rt::attention_mode_name(kModeOrder[m]), warmed.error().to_string().c_str());
          return kvframe::exit_code(warmed.error().code);
        }
        if (cuda) at::empty({1}, at::TensorOptions(at::kFloat).device(engine.model().device())).cpu();  // waits for the GPU
        warm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      }
      auto answer = sessions[m]->query(task);
      if (!answer) {
        std::fprintf(stderr, "bench_game_frames: frame %d, %s mode: %s\n", i, rt::attention_mode_name(kModeOrder[m]),
                     answer.error().to_string().c_str());
        return kvframe::exit_code(answer.error().code);
      }
      const rt::QueryReport& r = answer->report;
      Query q;
      q.ttft = r.ms.first_token;
      q.ms = r.ms;
      q.total = r.ms.total;
      q.tokens_encoded = r.tokens_encoded;
      q.blocks_encoded = r.blocks_encoded;
      q.blocks_total = r.blocks_total;
      q.context_tokens = r.context_tokens;
      q.query_tokens = r.query_tokens;
      q.generated = r.generated_tokens;
      q.dirty = diff->dirty();
      q.first_token = answer->first_logits.defined() ? answer->first_logits.argmax().item<int64_t>() : -1;
      if (answer->first_logits.defined()) q.log_probs = at::log_softmax(answer->first_logits.to(at::kDouble), -1);
      q.tokens = answer->tokens;
      q.text = answer->text;
      q.assembly = r.assembly;
      q.warm_ms = warm_ms;
      char part[96];
      std::snprintf(part, sizeof part, " %s %.0f ms (%lld enc)", rt::attention_mode_name(kModeOrder[m]), q.ttft,
                    static_cast<long long>(q.tokens_encoded));
      progress += part;
      row.q[m] = std::move(q);
    }
    if (i % 10 == 0 || row.q[0] || row.q[1] || i + 1 == o.frames) {
      std::fprintf(stderr, "[bench] frame %d (%d of %d): %lld tokens, %.1f%% blocks dirty; TTFT%s\n", i, i + 1, o.frames,
                   static_cast<long long>(row.q[2]->context_tokens), 100.0 * row.changed_fraction, progress.c_str());
    }
    rows.push_back(std::move(row));
  }

  // Summaries.
  std::array<ModeSummary, kModes> summary;
  for (int m = 0; m < kModes; ++m) summary[m] = summarize(rows, m);
  std::vector<double> changed, context_tokens, bytes_written, blocks_written, blocks_rotated, assembly_ms;
  std::array<std::vector<double>, kStages.size()> stage_ms;  // block mode's TTFT by stage
  int compactions = 0;
  for (const FrameRow& r : rows) {
    if (r.frame == 0) continue;
    changed.push_back(r.changed_fraction);
    const Query& b = *r.q[2];
    context_tokens.push_back(static_cast<double>(b.context_tokens));
    bytes_written.push_back(static_cast<double>(b.assembly.bytes_written));
    blocks_written.push_back(static_cast<double>(b.assembly.blocks_written));
    blocks_rotated.push_back(static_cast<double>(b.assembly.blocks_rotated));
    assembly_ms.push_back(b.assembly.ms);
    for (size_t s = 0; s < kStages.size(); ++s) stage_ms[s].push_back(b.ms.*kStages[s].field);
    compactions += b.assembly.compacted;
  }
  const Agreement block_vs_full = agreement(rows, 2), prefix_vs_full = agreement(rows, 1);
  const double block_over_full = summary[2].ttft_p50 / summary[0].ttft_p50;
  const double block_over_prefix = summary[2].ttft_p50 / summary[1].ttft_p50;
  const FrameRow& cold = rows.front();

  if (o.json) {
    nlohmann::json out;
    out["model"] = config.name;
    out["device"] = o.engine.device;
    out["dtype"] = dtype_name;
    out["backend"] = rt::cpu_backend_description();
    out["stream"] = {{"heroes", stream_params.heroes}, {"units", stream_params.units},
                     {"towers", stream_params.towers}, {"events", stream_params.events},
                     {"change_rate", stream_params.change_rate}, {"frame0_tokens", frame0_tokens}};
    out["drop"] = o.drop;
    out["layout"] = o.layout;
    out["blocks_after_prefix"] = o.blocks_after_prefix;
#define KVF_KNOB_JSON(name) out[#name] = o.fidelity.name;
    KVF_FIDELITY_KNOBS(KVF_KNOB_JSON)
#undef KVF_KNOB_JSON
    out["order"] = o.order;
    out["changed_block_fraction_mean"] = mean(changed);
    out["modes"] = nlohmann::json::object();
    for (int m = 0; m < kModes; ++m) {
      const ModeSummary& s = summary[m];
      out["modes"][rt::attention_mode_name(kModeOrder[m])] = {
          {"every", every[m]},          {"frames_queried", s.queried}, {"ttft_p50_ms", s.ttft_p50},
          {"ttft_p99_ms", s.ttft_p99},  {"latency_p50_ms", s.total_p50}, {"latency_p99_ms", s.total_p99},
          {"tokens_encoded_mean", s.tokens_encoded}, {"blocks_encoded_mean", s.blocks_encoded},
          {"dirty_blocks_mean", s.dirty}, {"generated_mean", s.generated},
          {"frame0_ttft_ms", cold.q[m] ? cold.q[m]->ttft : std::nan("")}};
    }
    out["block_over_full_ttft_p50"] = block_over_full;
    out["block_over_prefix_ttft_p50"] = block_over_prefix;
    out["agreement_block_full"] = {{"frames", block_vs_full.frames}, {"first_token", block_vs_full.first_token},
                                   {"text", block_vs_full.text}, {"kl_first_token", block_vs_full.kl}};
    out["agreement_prefix_full"] = {{"frames", prefix_vs_full.frames}, {"first_token", prefix_vs_full.first_token},
                                    {"text", prefix_vs_full.text}, {"kl_first_token", prefix_vs_full.kl}};
    out["assembly"] = {{"bytes_written_mean", mean(bytes_written)}, {"blocks_written_mean", mean(blocks_written)},
                       {"blocks_rotated_mean", mean(blocks_rotated)}, {"ms_mean", mean(assembly_ms)},
                       {"compactions", compactions}};
    out["frames"] = nlohmann::json::array();
    for (const FrameRow& r : rows) {
      nlohmann::json f = {{"frame", r.frame}, {"changed_fraction", r.changed_fraction}};
      for (int m = 0; m < kModes; ++m) {
        if (!r.q[m]) continue;
        const Query& q = *r.q[m];
        f[rt::attention_mode_name(kModeOrder[m])] = {
            {"ttft_ms", q.ttft},           {"total_ms", q.total},         {"tokens_encoded", q.tokens_encoded},
            {"blocks_encoded", q.blocks_encoded}, {"blocks_total", q.blocks_total},
            {"context_tokens", q.context_tokens}, {"query_tokens", q.query_tokens}, {"dirty", q.dirty},
            {"first_token", q.first_token}, {"text", q.text},
            {"assembly_bytes_written", q.assembly.bytes_written}};
      }
      out["frames"].push_back(std::move(f));
    }
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("\n%s · %s %s · %s\n", config.name.c_str(), o.engine.device.c_str(), dtype_name.c_str(),
                rt::cpu_backend_description().c_str());
    std::printf("frames: %d of a MOBA match (%d heroes, %d units, %d towers, %d events, change rate %.3f); blocked "
                "frame 0: %lld tokens (engine: %lld context tokens, mean %.0f over frames 1..%d); query %lld tokens, "
                "%d greedy tokens\n",
                o.frames, stream_params.heroes, stream_params.units, stream_params.towers, stream_params.events,
                stream_params.change_rate, static_cast<long long>(frame0_tokens),
                static_cast<long long>(cold.q[2]->context_tokens), mean(context_tokens), o.frames - 1,
                static_cast<long long>(cold.q[2]->query_tokens), o.max_tokens);
    if (!o.drop.empty()) {
      std::string dropped;
      for (const std::string& d : o.drop) dropped += (dropped.empty() ? "" : ", ") + d;
      std::printf("also dropped from every frame (--drop): %s\n", dropped.c_str());
    }
    std::printf("blocks changed per frame: %s%% mean (min %s%%, max %s%%) of %lld blocks; block layout %s, "
                "blocks after prefix %s, %s, prompt order %s\n",
                cell(100.0 * mean(changed), 2).c_str(), cell(100.0 * percentile(changed, 0), 2).c_str(),
                cell(100.0 * percentile(changed, 100), 2).c_str(),
                static_cast<long long>(cold.q[2]->blocks_total), o.layout.c_str(),
                o.blocks_after_prefix ? "true" : "false", kvframe::common::fidelity_text(o.fidelity).c_str(),
                o.order.c_str());
    std::printf("\n%-7s %6s %8s %10s %10s %12s %12s %11s %11s %11s %6s\n", "mode", "every", "queried", "TTFT p50",
                "TTFT p99", "latency p50", "latency p99", "tok enc/q", "blk enc/q", "dirty blk/q", "gen");
    for (int m = 0; m < kModes; ++m) {
      const ModeSummary& s = summary[m];
      std::printf("%-7s %6d %8d %10s %10s %12s %12s %11s %11s %11s %6s\n", rt::attention_mode_name(kModeOrder[m]),
                  every[m], s.queried, cell(s.ttft_p50, 1).c_str(), cell(s.ttft_p99, 1).c_str(),
                  cell(s.total_p50, 1).c_str(), cell(s.total_p99, 1).c_str(), cell(s.tokens_encoded, 1).c_str(),
                  cell(s.blocks_encoded, 2).c_str(), cell(s.dirty, 2).c_str(), cell(s.generated, 1).c_str());
    }
    std::printf("(ms; frames 1..%d; 'queried': frames the mode answered; tok/blk enc/q: QueryReport's tokens_encoded /\n"
                " blocks_encoded per query; dirty blk/q: the frame diff since that session's previous query; gen: tokens\n"
                " generated; latency: QueryReport::ms.total)\n",
                o.frames - 1);
    std::printf("frame 0 (cold start) TTFT: full %.1f ms, prefix %.1f ms, block %.1f ms\n", cold.q[0]->ttft,
                cold.q[1]->ttft, cold.q[2]->ttft);
    std::printf("TTFT p50 block/full %s (median per-frame ratio on shared frames %s); block/prefix %s (%s)\n",
                cell(block_over_full, 4).c_str(), cell(paired_ratio(rows, 2, 0), 4).c_str(),
                cell(block_over_prefix, 4).c_str(), cell(paired_ratio(rows, 2, 1), 4).c_str());
    if (every[1] > 1 && summary[1].queried > 0) {
      std::printf("prefix mode answered one frame in %d: its cache reflects %d frames of changes per query\n",
                  every[1], every[1]);
    }
    std::printf("agreement with full on %d shared frames: block first token %d/%d, %d-token text identical %d/%d, "
                "first-token KL %.3g nats; prefix first token %d/%d, text %d/%d, KL %.3g\n",
                block_vs_full.frames, block_vs_full.first_token, block_vs_full.frames, o.max_tokens, block_vs_full.text,
                block_vs_full.frames, block_vs_full.kl, prefix_vs_full.first_token, prefix_vs_full.frames,
                prefix_vs_full.text, prefix_vs_full.frames, prefix_vs_full.kl);
    std::printf("block assembly (%s): %s bytes written/frame, %s blocks written, %s blocks re-rotated, "
                "%s ms, %d compactions in %zu frames\n",
                o.layout.c_str(), cell(mean(bytes_written), 0).c_str(), cell(mean(blocks_written), 2).c_str(),
                cell(mean(blocks_rotated), 2).c_str(), cell(mean(assembly_ms), 2).c_str(), compactions,
                bytes_written.size());
    std::printf("block TTFT p50 by stage:");
    for (size_t s = 0; s < kStages.size(); ++s) {
      std::printf("%s %s %s ms", s ? "," : "", kStages[s].name, cell(percentile(stage_ms[s], 50), 2).c_str());
    }
    std::printf(" (the rest: sampling the first token)\n");
    if (o.warm) {
      std::vector<double> warm_ms;
      for (const FrameRow& r : rows) {
        if (r.frame != 0) warm_ms.push_back(r.q[2]->warm_ms);
      }
      std::printf("--warm: each frame applied ahead of its query (not in TTFT): block warm-up p50 %s ms, p99 %s ms\n",
                  cell(percentile(warm_ms, 50), 2).c_str(), cell(percentile(warm_ms, 99), 2).c_str());
    }
  }

  if (!o.plot.empty()) {
    std::array<kvframe::plot::PlotSeries, kModes> series = {
        kvframe::plot::PlotSeries{"full", {}, {}, false, "linespoints lw 2 pt 7"},
        kvframe::plot::PlotSeries{"prefix", {}, {}, false, "linespoints lw 2 pt 5 dt 2"},
        kvframe::plot::PlotSeries{"block", {}, {}, false, "lines lw 2"}};
    for (const FrameRow& r : rows) {
      for (int m = 0; m < kModes; ++m) {
        if (!r.q[m]) continue;
        series[m].x.push_back(static_cast<double>(r.frame));
        series[m].y.push_back(r.q[m]->ttft);
      }
    }
    kvframe::plot::PlotOptions options;
    options.title = "TTFT per frame · MOBA, " + std::to_string(frame0_tokens) + " blocked tokens · " + config.name +
                    " · " + o.engine.device + " " + dtype_name;
    options.x = {"frame", 0, "*:*"};
    options.y = {"TTFT (ms)", 10, "*:*"};
    options.key = "top right";
    if (kvframe::plot::write_plot(o.plot, options, {series.begin(), series.end()})) {
      std::fprintf(stderr, "[bench] plot: %s\n", o.plot.c_str());
    } else {
      std::fprintf(stderr, "[bench] no plot: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox)\n");
    }
  }
  return kvframe::kExitOk;
}
