// bench_tenants: what tenant isolation costs. T tenants each play their own
// match (Hold'em tables, MOBA matches) on one engine, once with every session
// in one block-cache scope (what a server did before isolation) and once with
// a scope per tenant (what kvframe-serve does now for clients that are not in
// one --cache-group). Blocks that are the same in every match (the MOBA shop
// catalog, the Hold'em rules of play) are then encoded once per tenant
// instead of once: the table shows the hit rate, the tokens encoded per frame
// and the bytes the store holds, side by side in one run.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine_setup.h"
#include "gnuplot_plot.h"
#include "holdem/holdem_state.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/json_blocker/rules.h"
#include "kvframe/runtime/cpu_process.h"
#include "moba/moba_stream.h"

namespace {

namespace rt = kvframe::runtime;
namespace jb = kvframe::json_blocker;
namespace moba = kvframe::examples::moba;
namespace holdem = kvframe::examples::holdem;

struct Options {
  kvframe::bench::EngineOptions engine;
  std::vector<int> tenants = {1, 2, 4};
  int frames = 4;
  double moba_scale = 0.05;
  int holdem_history = 10;
  std::string plot_dir = ".";
};

struct Run {
  std::string workload;
  int tenants = 0;
  bool isolated = false;
  int64_t frames = 0, blocks = 0, hits = 0, tokens_encoded = 0;
  int64_t store_bytes = 0;
  double seconds = 0;
};

// Frame i of tenant t's match: its own table or match, changing frame to frame.
std::string frame_of(const std::string& workload, int tenant, int i, const Options& o,
                     std::vector<moba::StreamGenerator>& matches) {
  if (workload == "moba") return matches[static_cast<size_t>(tenant)].next().json;
  holdem::HoldemParams params;
  params.seed = static_cast<uint64_t>(1000 * (tenant + 1));
  params.players = 6;
  params.history = o.holdem_history + i;  // a hand finishes between frames
  return holdem::holdem_state(params);
}

std::optional<Run> play(rt::Engine& engine, const std::string& workload, const jb::Rules& rules, int tenants,
                        bool isolated, const Options& o) {
  engine.store().clear();
  Run run{workload, tenants, isolated};
  std::vector<std::unique_ptr<rt::Session>> sessions;
  std::vector<moba::StreamGenerator> matches;
  for (int t = 0; t < tenants; ++t) {
    rt::SessionParams params;
    params.mode = rt::AttentionMode::kBlock;
    params.rules = rules;
    params.context = 16384;
    params.cache_scope = isolated ? static_cast<uint64_t>(t + 1) : 0;
    auto session = rt::Session::open(engine, params);
    if (!session) {
      std::fprintf(stderr, "bench_tenants: %s\n", session.error().to_string().c_str());
      return std::nullopt;
    }
    sessions.push_back(std::move(session).value());
    matches.emplace_back(moba::scaled_params(o.moba_scale, static_cast<uint64_t>(t + 1), 0.02));
  }
  rt::Task task;
  task.instruction = "What happens next?";
  task.generate.max_tokens = 1;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.frames; ++i) {
    for (int t = 0; t < tenants; ++t) {  // the tenants' frames interleave, as on a server
      if (auto diff = sessions[static_cast<size_t>(t)]->update(frame_of(workload, t, i, o, matches)); !diff) {
        std::fprintf(stderr, "bench_tenants: frame rejected: %s\n", diff.error().to_string().c_str());
        return std::nullopt;
      }
      auto answer = sessions[static_cast<size_t>(t)]->query(task);
      if (!answer) {
        std::fprintf(stderr, "bench_tenants: %s\n", answer.error().to_string().c_str());
        return std::nullopt;
      }
      const rt::QueryReport& r = answer->report;
      ++run.frames;
      run.blocks += r.blocks_total;
      run.hits += r.cache_hits;
      run.tokens_encoded += r.tokens_encoded - r.query_tokens;
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.store_bytes = engine.store().stats().bytes;
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"What tenant isolation costs: T tenants' matches on one engine, one shared block-cache scope vs a "
               "scope per tenant (hit rate, tokens encoded per frame, store bytes), Hold'em and MOBA."};
  kvframe::bench::add_engine_options(app, o.engine);
  app.add_option("--tenants", o.tenants, "tenant counts to run")->capture_default_str();
  app.add_option("--frames", o.frames, "frames per tenant")->check(CLI::Range(1, 10000))->capture_default_str();
  app.add_option("--moba-scale", o.moba_scale, "MOBA population scale (moba::scaled_params)")->capture_default_str();
  app.add_option("--holdem-history", o.holdem_history, "finished hands in the first Hold'em frame")->capture_default_str();
  app.add_option("--plot-dir", o.plot_dir, "write bench_tenants.png here (empty: no plot)")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  rt::tune_cpu_process(argv, o.engine.threads);
  auto loaded = kvframe::bench::load_engine(o.engine, "bench_tenants");
  if (!loaded) return kvframe::kExitBadInput;
  std::unique_ptr<rt::Engine> engine = std::move(loaded).value();

  std::vector<Run> runs;
  for (const char* workload : {"holdem", "moba"}) {
    auto rules = jb::load_rules(std::string(workload) == "moba" ? KVFRAME_MOBA_RULES_FILE : KVFRAME_HOLDEM_RULES_FILE);
    if (!rules) {
      std::fprintf(stderr, "bench_tenants: rules: %s\n", rules.error().to_string().c_str());
      return kvframe::kExitBadInput;
    }
    for (int tenants : o.tenants) {
      for (bool isolated : {false, true}) {
        std::fprintf(stderr, "[bench] %s, %d tenants, %s\n", workload, tenants, isolated ? "isolated" : "shared");
        auto run = play(*engine, workload, *rules, tenants, isolated, o);
        if (!run) return kvframe::kExitFailed;
        runs.push_back(*run);
      }
    }
  }

  std::printf("\n%-7s %8s %-9s %9s %14s %10s %8s\n", "game", "tenants", "scopes", "hit rate", "tokens/frame",
              "store MiB", "time s");
  for (const Run& r : runs) {
    std::printf("%-7s %8d %-9s %8.1f%% %14.0f %10.1f %8.2f\n", r.workload.c_str(), r.tenants,
                r.isolated ? "per-tenant" : "shared", 100.0 * static_cast<double>(r.hits) / static_cast<double>(r.blocks),
                static_cast<double>(r.tokens_encoded) / static_cast<double>(r.frames),
                static_cast<double>(r.store_bytes) / (1 << 20), r.seconds);
  }
  std::printf("\nisolated / shared, tokens encoded per frame:");
  for (size_t i = 0; i + 1 < runs.size(); i += 2) {
    std::printf(" %s x%d: %.2fx;", runs[i].workload.c_str(), runs[i].tenants,
                static_cast<double>(runs[i + 1].tokens_encoded) / static_cast<double>(std::max<int64_t>(1, runs[i].tokens_encoded)));
  }
  std::printf("\n");

  if (!o.plot_dir.empty()) {
    std::vector<kvframe::plot::PlotSeries> series;
    for (const char* workload : {"holdem", "moba"}) {
      for (bool isolated : {false, true}) {
        kvframe::plot::PlotSeries s;
        s.title = std::string(workload) + (isolated ? ", scope per tenant" : ", one shared scope");
        for (const Run& r : runs) {
          if (r.workload != workload || r.isolated != isolated) continue;
          s.x.push_back(r.tenants);
          s.y.push_back(static_cast<double>(r.tokens_encoded) / static_cast<double>(r.frames));
        }
        series.push_back(s);
      }
    }
    kvframe::plot::PlotOptions plot;
    plot.title = "bench_tenants: tokens encoded per frame, shared vs per-tenant block cache";
    plot.x = {"tenants", 2, "*:*"};
    plot.y = {"tokens encoded per frame (mean over tenants and frames)", 0, "0:*"};
    const std::string path = o.plot_dir + "/bench_tenants.png";
    if (kvframe::plot::write_plot(path, plot, series)) {
      std::fprintf(stderr, "[bench] wrote %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "[bench] no plot (is gnuplot installed? scripts/setup.sh)\n");
    }
  }
  return kvframe::kExitOk;
}
