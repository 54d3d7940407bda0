// bench_npc: NPC actions and commentary on one Hold'em frame, measured end to
// end through a block-mode Session (the engine a game talks to).
//
//   1. Many NPCs, one state. For each N of --npcs: N tasks, each with its own
//      instruction ("You are NPC k (style ...). Choose your action.") and the
//      state's action schema (anyOf fold / call or check / raise with an
//      integer amount in the legal range), answered greedily
//        sequential  Session::query, one task after another
//        batched     Session::query_batch, all tasks decoded as one batch
//      on the SAME frame, already in the KV: the frame is applied and warm-up
//      queries run before anything is timed, so the frame's encoding is in
//      none of the numbers. Per-NPC latency is from the round's start until
//      that NPC's answer is done: sequentially NPC k waits for all before it
//      (measured here with a clock after each query() returns); batched it is
//      the answer's QueryReport::ms.total, which query_batch counts from its
//      own start. Batched answers must equal sequential ones token for token.
//   2. Masking cost per decode step: QueryReport::ms.mask per generated token
//      against the decode step (ms.decode / (generated - 1)), for the schema
//      already compiled (cached masks) and for a first query on a schema text
//      never seen before (cold: compile + first mask computations).
//   3. Commentary streaming: a free-text task with on_chunk, per round: time
//      to the first streamed chunk against time to the first token, chunks,
//      sentence ends.
//   4. A PNG: total and per-NPC latency (p50, max) against N, both ways.
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gnuplot_plot.h"
#include "holdem/holdem_state.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/json_blocker/partition.h"
#include "kvframe/json_blocker/rules.h"
#include "kvframe/runtime_tokenizer/chat_template.h"
#include "kvframe/runtime/cpu_process.h"
#include "kvframe/default_model/default_model.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_engine/session.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"
#include "engine_setup.h"
#include "model_shapes.h"
#include "sample_stats.h"

namespace {

namespace rt = kvframe::runtime;
namespace jb = kvframe::json_blocker;
namespace holdem = kvframe::examples::holdem;
using kvframe::bench::mean;
using kvframe::bench::percentile;
using Clock = std::chrono::steady_clock;

// 0 ok; 1 usage; 2 the model is missing or the engine failed.

constexpr const char* kFooter =
    "--repeats 0 (auto): 3 rounds for N <= 8, 1 for larger N (keeps the default run to a few minutes on a\n"
    "2-core CPU). Every round runs sequential, then batched, then one commentary query, on the same frame.\n"
    "Not timed: loading, the frame's first encoding and the warm-up queries (one query and one batch of 2).\n"
    "\n"
    "--shape runs a random-weight model of a real architecture's shape (for GPU runs, e.g. --shape llama3-8b\n"
    "  --device cuda --dtype bf16). A random-weight model has no tokenizer: the tokenizer and chat template\n"
    "  come from --model's GGUF file, and the shape's n_vocab is set to that tokenizer's. Its answers are\n"
    "  noise, but still valid actions (the schema constrains them).\n"
    "\n"
    "Exit status: 0 ok; 1 usage error; 2 the model is missing; 3 the engine failed (message on stderr).\n"
    "The default model is fetched by scripts/fetch-model.sh.";

const std::vector<std::string> kStyles = {"tight-aggressive", "loose-aggressive", "tight-passive", "calling station",
                                          "maniac",           "rock",             "balanced",      "bluffer"};

struct Options {
  kvframe::bench::EngineOptions engine;
  std::vector<int> npcs = {1, 8, 32};
  int repeats = 0;
  int32_t max_tokens = 32;
  int32_t commentary_tokens = 64;
  std::string commentary = "Comment on the hand so far in two sentences.";
  int players = 6;
  int history = 20;
  uint64_t seed = 1;
  std::string plot_dir = ".";
};

int fail(const kvframe::Error& error, const char* doing) {
  std::fprintf(stderr, "bench_npc: %s: %s\n", doing, error.to_string().c_str());
  return kvframe::exit_code(error.code);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string cell(double v, int precision) {
  if (std::isnan(v)) return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f", precision, v);
  return buffer;
}

// The state's legal actions as a JSON Schema: one object per action, raise
// with its amount range. `description` (ignored by the constraint) makes a
// new schema text for the cold-mask measurement.
std::string action_schema(const nlohmann::json& legal, const std::string& description = "") {
  nlohmann::ordered_json any = nlohmann::ordered_json::array();
  for (const auto& a : legal) {
    const std::string action = a.at("action").get<std::string>();
    nlohmann::ordered_json option;
    option["type"] = "object";
    option["properties"]["action"] = {{"const", action}};
    option["required"] = {"action"};
    if (action == "raise" || action == "bet") {
      option["properties"]["amount"] = {
          {"type", "integer"}, {"minimum", a.at("min").get<int64_t>()}, {"maximum", a.at("max").get<int64_t>()}};
      option["required"].push_back("amount");
    }
    option["additionalProperties"] = false;
    any.push_back(std::move(option));
  }
  nlohmann::ordered_json schema;
  if (!description.empty()) schema["description"] = description;
  schema["anyOf"] = std::move(any);
  return schema.dump();
}

// Whether an answer is one of the legal actions; its action name ("" when not).
std::string legal_action(const std::string& text, const nlohmann::json& legal) {
  const auto answer = nlohmann::json::parse(text, nullptr, false);
  if (answer.is_discarded() || !answer.is_object() || !answer.contains("action") || !answer["action"].is_string()) {
    return "";
  }
  const std::string action = answer["action"].get<std::string>();
  for (const auto& a : legal) {
    if (a.at("action") != action) continue;
    if (action == "raise" || action == "bet") {
      if (!answer.contains("amount") || !answer["amount"].is_number_integer()) return "";
      const int64_t amount = answer["amount"].get<int64_t>();
      if (amount < a.at("min").get<int64_t>() || amount > a.at("max").get<int64_t>()) return "";
    }
    return action;
  }
  return "";
}

// One schema-constrained answer's masking figures.
struct MaskSample {
  double mask_per_token = 0;  // ms.mask / generated tokens
  double step = 0;            // ms.decode / (generated - 1); NaN for one token
};

MaskSample mask_sample(const rt::QueryReport& r) {
  MaskSample m;
  const auto gen = static_cast<double>(r.generated_tokens);
  m.mask_per_token = gen > 0 ? r.ms.mask / gen : std::nan("");
  m.step = gen > 1 ? r.ms.decode / (gen - 1) : std::nan("");
  return m;
}

std::vector<double> mask_per_token(const std::vector<MaskSample>& samples) {
  std::vector<double> v;
  for (const MaskSample& m : samples) v.push_back(m.mask_per_token);
  return v;
}

// Everything measured for one N.
struct NpcRow {
  int npcs = 0, rounds = 0;
  std::vector<double> seq_total, batch_total;  // ms per round
  std::vector<double> seq_done, batch_done;    // ms per NPC answer, pooled over rounds
  int64_t seq_tokens = 0, batch_tokens = 0;    // generated, all rounds
  int same = 0, compared = 0;                  // batched tokens == sequential tokens
  int complete = 0, legal = 0, answers = 0;    // batched + sequential answers: StopReason::kComplete, legal actions
  std::map<std::string, int> actions;          // sequential answers by action
  std::vector<MaskSample> seq_mask;            // per sequential answer
  std::vector<MaskSample> batch_mask;          // per batched round: Σ mask / steps, longest decode / (steps - 1)
  // The cold schema: one query on a schema text never seen before.
  MaskSample cold;
  double cold_compile_ms = NAN, cold_schema_mask_ms = NAN, cold_tokenize_ms = NAN;
  int64_t cold_masks = 0;
  std::string sample_answer;
};

struct CommentaryRow {
  double first_chunk = 0, first_token = 0, total = 0;
  int chunks = 0, sentence_ends = 0;
  int64_t generated = 0;
  std::string text;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "NPC actions and commentary on one Hold'em frame through a block-mode Session: N schema-constrained NPC "
      "queries sequential vs batched (query_batch), masking cost per decode step, commentary streaming."};
  app.footer(kFooter);
  o.engine.game = "holdem";  // --lora auto: the Hold'em adapter where kvframe ships one
  kvframe::bench::add_engine_options(app, o.engine);
  app.add_option("--npcs", o.npcs, "NPC counts per frame (comma-separated)")
      ->delimiter(',')
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--repeats", o.repeats, "rounds per NPC count (0: auto, see below)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--max-tokens", o.max_tokens, "token limit of an NPC's action")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--commentary-tokens", o.commentary_tokens, "token limit of the commentary")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--commentary", o.commentary, "the commentary task's instruction")->capture_default_str();
  app.add_option("--players", o.players, "Hold'em players")->check(CLI::Range(2, 9))->capture_default_str();
  app.add_option("--history", o.history, "hands in the state's history")->check(CLI::Range(0, 1000))->capture_default_str();
  app.add_option("--seed", o.seed, "state generator seed")->capture_default_str();
  app.add_option("--plot-dir", o.plot_dir, "write bench_npc_<device>.png here (empty: no plot)")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, o.engine.threads);
  const Clock::time_point run_start = Clock::now();

  auto loaded = kvframe::bench::load_engine(o.engine, "bench_npc");
  if (!loaded) return kvframe::kExitBadInput;
  std::unique_ptr<rt::Engine> engine = std::move(loaded).value();
  const rt::ModelConfig& config = engine->model().config();
  const std::string dtype_name = at::toString(engine->model().dtype());

  // The frame: a Hold'em state, its legal actions and their schema.
  holdem::HoldemParams state_params;
  state_params.seed = o.seed;
  state_params.players = o.players;
  state_params.history = o.history;
  const std::string frame = holdem::holdem_state(state_params);
  const nlohmann::json legal = nlohmann::json::parse(frame)["state"]["legal_actions"];
  const std::string schema = action_schema(legal);
  auto rules = jb::load_rules(KVFRAME_HOLDEM_RULES_FILE);
  if (!rules) {
    std::fprintf(stderr, "bench_npc: rules %s: %s\n", KVFRAME_HOLDEM_RULES_FILE, rules.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }
  const auto frame_tokens = kvframe::bench::blocked_tokens(engine->tokenizer(), *rules, frame);
  if (!frame_tokens) {
    std::fprintf(stderr, "bench_npc: the Hold'em state does not partition (a bug here)\n");
    return kvframe::kExitFailed;
  }

  rt::SessionParams session_params;
  session_params.mode = rt::AttentionMode::kBlock;
  session_params.rules = *rules;
  session_params.context = *frame_tokens * 5 / 4 + 512 + std::max(o.max_tokens, o.commentary_tokens);
  auto opened = rt::Session::open(*engine, session_params);
  if (!opened) return fail(opened.error(), "opening a session");
  rt::Session& session = **opened;
  if (auto diff = session.update(frame); !diff) {
    std::fprintf(stderr, "bench_npc: the state was rejected: %s\n", diff.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }

  auto npc_task = [&](int k, const std::string& task_schema) {
    rt::Task task;
    char text[160];
    std::snprintf(text, sizeof text, "You are NPC %d (style %s). Choose your action.", k + 1,
                  kStyles[static_cast<size_t>(k) % kStyles.size()].c_str());
    task.instruction = text;
    task.generate.max_tokens = o.max_tokens;  // greedy: SamplingParams' default temperature 0
    task.output_schema = task_schema;
    return task;
  };

  // Warm-up, not timed: the frame's encoding, the schema's compilation, and
  // libtorch's first calls of both paths.
  std::fprintf(stderr, "[bench] frame: %lld blocked tokens; warm-up (encodes the frame)\n",
               static_cast<long long>(*frame_tokens));
  auto warm = session.query(npc_task(0, schema));
  if (!warm) return fail(warm.error(), "warm-up query");
  const rt::QueryReport frame_report = warm->report;
  {
    auto warm_batch = session.query_batch({npc_task(0, schema), npc_task(1, schema)});
    for (auto& r : warm_batch) {
      if (!r) return fail(r.error(), "warm-up batch");
    }
  }
  std::fprintf(stderr, "[bench] warm-up done: %lld context tokens, %lld blocks, frame encode %.0f ms, answer %s\n",
               static_cast<long long>(frame_report.context_tokens), static_cast<long long>(frame_report.blocks_total),
               frame_report.ms.encode, warm->text.c_str());

  std::vector<NpcRow> rows;
  std::vector<CommentaryRow> commentary;
  for (int n : o.npcs) {
    NpcRow row;
    row.npcs = n;
    row.rounds = o.repeats > 0 ? o.repeats : (n <= 8 ? 3 : 1);
    std::vector<rt::Task> tasks;
    for (int k = 0; k < n; ++k) tasks.push_back(npc_task(k, schema));

    for (int round = 0; round < row.rounds; ++round) {
      // (a) sequential
      std::vector<rt::Answer> seq;
      const Clock::time_point seq_start = Clock::now();
      for (const rt::Task& task : tasks) {
        auto answer = session.query(task);
        if (!answer) return fail(answer.error(), "sequential query");
        row.seq_done.push_back(ms_since(seq_start));
        seq.push_back(std::move(answer).value());
      }
      row.seq_total.push_back(ms_since(seq_start));

      // (b) batched
      const Clock::time_point batch_start = Clock::now();
      auto batch = session.query_batch(tasks);
      row.batch_total.push_back(ms_since(batch_start));
      double mask_sum = 0, longest_decode = 0;
      int64_t steps = 0;
      for (size_t k = 0; k < batch.size(); ++k) {
        if (!batch[k]) return fail(batch[k].error(), "batched query");
        const rt::Answer& b = *batch[k];
        const rt::Answer& s = seq[k];
        row.batch_done.push_back(b.report.ms.total);
        row.batch_tokens += b.report.generated_tokens;
        row.seq_tokens += s.report.generated_tokens;
        row.same += b.tokens == s.tokens ? 1 : 0;
        ++row.compared;
        for (const rt::Answer* a : {&s, &b}) {
          ++row.answers;
          row.complete += a->stop == rt::StopReason::kComplete ? 1 : 0;
          row.legal += legal_action(a->text, legal).empty() ? 0 : 1;
        }
        const std::string action = legal_action(s.text, legal);
        ++row.actions[action.empty() ? "(not legal)" : action];
        row.seq_mask.push_back(mask_sample(s.report));
        mask_sum += b.report.ms.mask;
        if (b.report.generated_tokens > steps) {
          steps = b.report.generated_tokens;
          longest_decode = b.report.ms.decode;
        }
      }
      row.batch_mask.push_back({steps > 0 ? mask_sum / static_cast<double>(steps) : std::nan(""),
                                steps > 1 ? longest_decode / static_cast<double>(steps - 1) : std::nan("")});
      if (row.sample_answer.empty()) row.sample_answer = seq.front().text;

      // Commentary, streamed.
      CommentaryRow c;
      rt::Task task;
      task.instruction = o.commentary;
      task.generate.max_tokens = o.commentary_tokens;
      task.on_chunk = [&c](const rt::TextChunk& chunk) {
        ++c.chunks;
        c.sentence_ends += chunk.sentence_end ? 1 : 0;
      };
      auto comment = session.query(task);
      if (!comment) return fail(comment.error(), "commentary query");
      c.first_chunk = comment->report.ms.first_chunk;
      c.first_token = comment->report.ms.first_token;
      c.total = comment->report.ms.total;
      c.generated = comment->report.generated_tokens;
      c.text = comment->text;
      commentary.push_back(std::move(c));

      std::fprintf(stderr,
                   "[bench] %d NPCs, round %d of %d: sequential %.0f ms, batched %.0f ms, same %d/%d; commentary "
                   "first chunk %.0f ms (%.0fs elapsed)\n",
                   n, round + 1, row.rounds, row.seq_total.back(), row.batch_total.back(), row.same, row.compared,
                   commentary.back().first_chunk, ms_since(run_start) / 1000);
    }

    // Cold masks: a schema text never seen (an ignored description makes it
    // new): compiled in this query, every mask computed for the first time.
    {
      const std::string cold_schema = action_schema(legal, "bench_npc cold schema for " + std::to_string(n) + " NPCs");
      auto cold = session.query(npc_task(0, cold_schema));
      if (!cold) return fail(cold.error(), "cold-schema query");
      row.cold = mask_sample(cold->report);
      row.cold_tokenize_ms = cold->report.ms.tokenize;
      if (auto compiled = engine->schemas().get(cold_schema)) {
        const rt::CompiledSchema::Stats stats = (*compiled)->stats();
        row.cold_compile_ms = stats.compile_ms;
        row.cold_schema_mask_ms = stats.mask_ms;
        row.cold_masks = stats.masks;
      }
    }
    rows.push_back(std::move(row));
  }
  const double elapsed_s = ms_since(run_start) / 1000;

  // Tables.
  std::printf("\n%s · %s %s · %s\n", config.name.c_str(), o.engine.device.c_str(), dtype_name.c_str(),
              rt::cpu_backend_description().c_str());
  std::printf("frame: Hold'em state, %d players, history %d (seed %llu): %zu bytes, %lld blocked tokens; engine: %lld "
              "context tokens (prefix + blocks) in %lld blocks, block mode\n",
              o.players, o.history, static_cast<unsigned long long>(o.seed), frame.size(),
              static_cast<long long>(*frame_tokens), static_cast<long long>(frame_report.context_tokens),
              static_cast<long long>(frame_report.blocks_total));
  std::printf("the frame is encoded before anything is timed (warm-up query: encode %.0f ms, first token %.0f ms); "
              "every timed query reuses all of its blocks\n",
              frame_report.ms.encode, frame_report.ms.first_token);
  std::printf("action schema (%zu bytes): %s\n", schema.size(), schema.c_str());

  std::printf("\n1. NPC actions per frame: sequential query() vs batched query_batch(); greedy, max_tokens %d\n",
              o.max_tokens);
  std::printf("%5s %6s | %10s %10s %8s | %9s %9s | %9s %9s | %9s %9s | %7s %7s %6s\n", "NPCs", "rounds", "seq total",
              "batch tot", "speedup", "seq p50", "seq max", "batch p50", "batch max", "seq ms/N", "batch ms/N",
              "tok/NPC", "same", "legal");
  for (const NpcRow& r : rows) {
    const double seq = percentile(r.seq_total, 50), batch = percentile(r.batch_total, 50);
    char same[32], legal_count[32];
    std::snprintf(same, sizeof same, "%d/%d", r.same, r.compared);
    std::snprintf(legal_count, sizeof legal_count, "%d/%d", r.legal, r.answers);
    std::printf("%5d %6d | %10.1f %10.1f %7.2fx | %9.1f %9.1f | %9.1f %9.1f | %9.1f %9.1f | %7.1f %7s %6s\n", r.npcs,
                r.rounds, seq, batch, seq / batch, percentile(r.seq_done, 50), percentile(r.seq_done, 100),
                percentile(r.batch_done, 50), percentile(r.batch_done, 100), seq / r.npcs, batch / r.npcs,
                static_cast<double>(r.seq_tokens) / static_cast<double>(r.compared), same, legal_count);
  }
  std::printf("(ms. total: wall time of a round, median over rounds; p50/max: per-NPC latency, round start -> that\n"
              " answer done, pooled over rounds — sequential: NPC k waits for NPCs 1..k-1; batched: its report's\n"
              " ms.total, counted from query_batch's start; ms/N: total / NPCs; tok/NPC: generated tokens per answer;\n"
              " same: batched answers token-identical to sequential; legal: answers (both ways) that parse as one\n"
              " of the state's legal actions)\n");
  for (const NpcRow& r : rows) {
    std::string actions;
    for (const auto& [name, count] : r.actions) actions += (actions.empty() ? "" : ", ") + name + " " + std::to_string(count);
    std::printf("  %2d NPCs: sequential answers by action: %s; stopped complete %d/%d; e.g. %s\n", r.npcs,
                actions.c_str(), r.complete, r.answers, r.sample_answer.c_str());
  }

  std::printf("\n2. Masking cost per decode step (goal: <= 10%% of a step)\n");
  std::printf("%-34s %8s %14s %14s %8s\n", "", "samples", "mask ms/token", "decode ms/step", "ratio");
  // One row: p50 of the masks' cost per token against p50 of a decode step.
  auto mask_row = [](const std::string& label, const std::vector<MaskSample>& samples) {
    std::vector<double> mask, step;
    for (const MaskSample& m : samples) mask.push_back(m.mask_per_token), step.push_back(m.step);
    const double mk = percentile(mask, 50), st = percentile(step, 50);
    std::printf("%-34s %8zu %14.4f %14.2f %7.2f%%\n", label.c_str(), mask.size(), mk, st, 100 * mk / st);
  };
  for (const NpcRow& r : rows) mask_row("cached schema, sequential (N=" + std::to_string(r.npcs) + ")", r.seq_mask);
  for (const NpcRow& r : rows) mask_row("cached schema, batched (N=" + std::to_string(r.npcs) + ")", r.batch_mask);
  std::vector<MaskSample> cold;
  for (const NpcRow& r : rows) cold.push_back(r.cold);
  mask_row("cold schema (new text), sequential", cold);
  std::printf("(p50s. mask ms/token: QueryReport ms.mask / generated tokens; decode ms/step: ms.decode / (generated - 1).\n"
              " batched: per round, the masks of all N answers per batched step (Σ ms.mask / steps) against one\n"
              " batched step (the longest answer's ms.decode / (its tokens - 1)). cold: one query per N on a schema\n"
              " text not seen before, the NPC 1 task)\n");
  for (const NpcRow& r : rows) {
    std::printf("  cold schema at N=%d: compile %s ms (in ms.tokenize %s ms); masks computed %lld in %s ms (schema "
                "stats); ms.mask %s ms/token vs cached %s\n",
                r.npcs, cell(r.cold_compile_ms, 2).c_str(), cell(r.cold_tokenize_ms, 2).c_str(),
                static_cast<long long>(r.cold_masks), cell(r.cold_schema_mask_ms, 2).c_str(),
                cell(r.cold.mask_per_token, 4).c_str(),
                cell(percentile(mask_per_token(r.seq_mask), 50), 4).c_str());
  }

  std::printf("\n3. Commentary streaming (\"%s\", max_tokens %d, one query per round)\n", o.commentary.c_str(),
              o.commentary_tokens);
  {
    std::vector<double> first_chunk, first_token, total, chunks, ends, generated, gap;
    for (const CommentaryRow& c : commentary) {
      first_chunk.push_back(c.first_chunk > 0 ? c.first_chunk : std::nan(""));
      first_token.push_back(c.first_token);
      total.push_back(c.total);
      chunks.push_back(c.chunks);
      ends.push_back(c.sentence_ends);
      generated.push_back(static_cast<double>(c.generated));
      if (c.first_chunk > 0) gap.push_back(c.first_chunk - c.first_token);
    }
    std::printf("%8s %13s %13s %13s %10s %8s %14s %10s\n", "queries", "first token", "first chunk", "chunk-token",
                "total", "chunks", "sentence ends", "tokens");
    std::printf("%8zu %13.1f %13.1f %13.1f %10.1f %8.1f %14.1f %10.1f\n", commentary.size(),
                percentile(first_token, 50), percentile(first_chunk, 50), percentile(gap, 50), percentile(total, 50),
                mean(chunks), mean(ends), mean(generated));
    std::printf("(ms, p50; chunks, sentence ends, tokens: mean per answer. first chunk: ms.first_chunk; chunk-token:\n"
                " first chunk - first token, the text held back until a chunk is safe to stream)\n");
    if (!commentary.empty()) std::printf("  e.g. \"%s\"\n", commentary.front().text.c_str());
  }
  std::printf("\nelapsed: %.1f s (load + warm-up + all rounds)\n", elapsed_s);

  // The plot.
  if (!o.plot_dir.empty()) {
    using kvframe::plot::PlotSeries;
    std::vector<PlotSeries> series = {
        PlotSeries{"sequential total", {}, {}, false, "linespoints lw 2 pt 7"},
        PlotSeries{"batched total", {}, {}, false, "linespoints lw 2 pt 5"},
        PlotSeries{"sequential per-NPC p50", {}, {}, false, "linespoints lw 1 pt 6 dt 2"},
        PlotSeries{"sequential per-NPC max", {}, {}, false, "linespoints lw 1 pt 8 dt 3"},
        PlotSeries{"batched per-NPC p50", {}, {}, false, "linespoints lw 1 pt 4 dt 2"},
        PlotSeries{"batched per-NPC max", {}, {}, false, "linespoints lw 1 pt 12 dt 3"}};
    for (const NpcRow& r : rows) {
      const double values[] = {percentile(r.seq_total, 50), percentile(r.batch_total, 50), percentile(r.seq_done, 50),
                               percentile(r.seq_done, 100), percentile(r.batch_done, 50), percentile(r.batch_done, 100)};
      for (size_t s = 0; s < series.size(); ++s) {
        series[s].x.push_back(r.npcs);
        series[s].y.push_back(values[s]);
      }
    }
    std::string device = o.engine.device;
    std::replace(device.begin(), device.end(), ':', '_');
    const std::string path = (std::filesystem::path(o.plot_dir) / ("bench_npc_" + device + ".png")).string();
    std::error_code ignored;
    std::filesystem::create_directories(o.plot_dir, ignored);
    kvframe::plot::PlotOptions options;
    options.title = "NPC actions on one Hold'em frame (" + std::to_string(frame_report.context_tokens) +
                    " tokens) · " + config.name + " · " + o.engine.device + " " + dtype_name;
    options.x = {"NPCs per frame", 2, "*:*"};
    options.y = {"latency (ms)", 10, "*:*"};
    options.key = "top left";
    if (kvframe::plot::write_plot(path, options, series)) {
      std::fprintf(stderr, "[bench] plot: %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "[bench] no plot: gnuplot is missing or failed (scripts/setup.sh installs gnuplot-nox)\n");
    }
  }
  return kvframe::kExitOk;
}
