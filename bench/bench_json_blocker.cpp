// bench_json_blocker: what json_blocker costs per frame, next to what merely
// parsing the same bytes with simdjson costs. A benchmark, not a test:
//
//   build/bench/bench_json_blocker [--benchmark_filter=moba] [other --benchmark_* flags]
//
// Workloads: a ~1 MiB MOBA frame and the next one from its generator, and the
// Hold'em pair of the Block-attention paper's Figure 5. After Google
// Benchmark's table comes a summary: MB/s, µs per frame, and throughput
// relative to the bare DOM parse of the same frame, measured in the same run.
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <vector>

#include "full_walk.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/json_blocker/json_blocker.h"
#include "summary_reporter.h"
#include "workloads.h"

namespace {

namespace jb = kvframe::json_blocker;
using kvframe::bench::Workload;

constexpr const char* kReference = "dom_parse";

void skip(benchmark::State& state, const jb::Error& error) {
  state.SkipWithError(error.to_string().c_str());
}

// FrameStream's own per-stage timings, averaged per frame into the
// patch_us / partition_us / diff_us columns: they split a push's cost.
class StageTimes {
 public:
  void add(const jb::FrameTimings& timings) {
    patch_ms_ += timings.patch_ms;
    partition_ms_ += timings.partition_ms;
    diff_ms_ += timings.diff_ms;
  }
  void report(benchmark::State& state) const {
    const auto per_frame_us = [](double ms) {
      return benchmark::Counter(ms * 1e3, benchmark::Counter::kAvgIterations);
    };
    state.counters["patch_us"] = per_frame_us(patch_ms_);
    state.counters["partition_us"] = per_frame_us(partition_ms_);
    state.counters["diff_us"] = per_frame_us(diff_ms_);
  }

 private:
  double patch_ms_ = 0, partition_ms_ = 0, diff_ms_ = 0;
};

// The reference: simdjson's DOM parser on the same bytes.
void dom_parse(benchmark::State& state, const Workload& workload) {
  simdjson::dom::parser parser;
  const simdjson::padded_string frame(workload.current());
  for (auto _ : state) {
    simdjson::dom::element root;
    if (parser.parse(frame).get(root) != simdjson::SUCCESS) {
      state.SkipWithError("simdjson DOM rejected the frame");
      break;
    }
    benchmark::DoNotOptimize(root);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * frame.size()));
}

// The other backend candidate: simdjson ondemand, every value touched once.
void ondemand_walk(benchmark::State& state, const Workload& workload) {
  simdjson::ondemand::parser parser;
  const simdjson::padded_string frame(workload.current());
  for (auto _ : state) {
    simdjson::ondemand::document document;
    simdjson::ondemand::value root;
    std::size_t checksum = 0;
    if (parser.iterate(frame).get(document) != simdjson::SUCCESS ||
        document.get_value().get(root) != simdjson::SUCCESS ||
        !kvframe::bench::touch_every_value(root, checksum)) {
      state.SkipWithError("simdjson ondemand rejected the frame");
      break;
    }
    benchmark::DoNotOptimize(checksum);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * frame.size()));
}

// Partitioning, with the Partitioner reused as a session would.
void partition(benchmark::State& state, const Workload& workload) {
  jb::Partitioner partitioner(workload.rules);
  for (auto _ : state) {
    auto blocks = partitioner.partition(workload.current());
    if (!blocks) {
      skip(state, blocks.error());
      break;
    }
    benchmark::DoNotOptimize(blocks->size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * workload.current().size()));
}

// Partitioning the current frame and diffing it against the previous
// frame's partition (made once, as a session keeps it).
void partition_and_diff(benchmark::State& state, const Workload& workload) {
  jb::Partitioner partitioner(workload.rules);
  auto previous = partitioner.partition(workload.previous());
  if (!previous) return skip(state, previous.error());
  for (auto _ : state) {
    auto current = partitioner.partition(workload.current());
    if (!current) {
      skip(state, current.error());
      break;
    }
    benchmark::DoNotOptimize(jb::diff(*previous, *current).dirty());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * workload.current().size()));
}

// The diff alone.
void diff(benchmark::State& state, const Workload& workload) {
  jb::Partitioner partitioner(workload.rules);
  auto previous = partitioner.partition(workload.previous());
  auto current = partitioner.partition(workload.current());
  if (!previous) return skip(state, previous.error());
  if (!current) return skip(state, current.error());
  for (auto _ : state) benchmark::DoNotOptimize(jb::diff(*previous, *current).dirty());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * workload.current().size()));
}

// FrameStream::push_whole through the workload's frames in turn (each
// push partitions and diffs against the frame before; the wrap-around from
// the last frame to the first is one larger change per cycle).
void push_whole(benchmark::State& state, const Workload& workload) {
  jb::FrameStream stream(workload.rules);
  StageTimes times;
  std::size_t next = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& frame = workload.frames[next];
    auto result = stream.push_whole(frame);
    if (!result) {
      skip(state, result.error());
      break;
    }
    times.add(stream.last_timings());
    bytes += frame.size();
    next = (next + 1) % workload.frames.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  times.report(state);
}

// Puts `stream` at the workload's first frame, already parsed for patching
// (the empty merge patch makes it so), as a stream that has been receiving
// patches would be.
bool restart(jb::FrameStream& stream, const Workload& workload) {
  return stream.push_whole(workload.frames[0]) &&
         stream.push_patch("{}", jb::PatchFormat::kMergePatch);
}

// FrameStream::push_patch through the workload's patch chain: patch
// application (nlohmann) + partition + diff. MB/s counts the bytes of the
// frames the patches produce.
void push_patch(benchmark::State& state, const Workload& workload, jb::PatchFormat format) {
  const auto& patches =
      format == jb::PatchFormat::kMergePatch ? workload.merge_patches : workload.json_patches;
  jb::FrameStream stream(workload.rules);
  // Once, untimed: the chain must rebuild the generator's frames exactly, or
  // this would measure something else.
  if (!restart(stream, workload)) return state.SkipWithError("the first frame was rejected");
  for (std::size_t i = 0; i < patches.size(); ++i) {
    auto result = stream.push_patch(patches[i], format);
    if (!result) return skip(state, result.error());
    if (stream.text() != workload.frames[i + 1]) {
      return state.SkipWithError("the patch chain does not rebuild the generator's frames");
    }
  }
  StageTimes times;
  std::size_t next = patches.size(), bytes = 0;
  for (auto _ : state) {
    if (next == patches.size()) {
      state.PauseTiming();
      restart(stream, workload);
      next = 0;
      state.ResumeTiming();
    }
    auto result = stream.push_patch(patches[next], format);
    if (!result) {
      skip(state, result.error());
      break;
    }
    times.add(stream.last_timings());
    bytes += workload.frames[++next].size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  times.report(state);
}

void register_benchmarks(const Workload& workload) {
  auto add = [&workload](const char* what, auto run) {
    benchmark::RegisterBenchmark(
        (workload.name + "/" + what).c_str(),
        [&workload, run](benchmark::State& state) { run(state, workload); })
        ->Unit(benchmark::kMicrosecond);
  };
  add(kReference, dom_parse);
  add("ondemand_walk", ondemand_walk);
  add("partition", partition);
  add("partition+diff", partition_and_diff);
  add("diff", diff);
  add("push_whole", push_whole);
  if (workload.merge_patches.empty()) return;
  add("push_merge_patch", [](benchmark::State& state, const Workload& w) {
    push_patch(state, w, jb::PatchFormat::kMergePatch);
  });
  add("push_json_patch", [](benchmark::State& state, const Workload& w) {
    push_patch(state, w, jb::PatchFormat::kJsonPatch);
  });
}

// DOM parsing dispatches at run time, inside libsimdjson; ondemand is inlined
// into the caller with the kernel its compile flags allow (this program's and
// json_blocker's flags are the same). A fallback kernel there is the scalar code.
void print_kernels(std::ostream& out) {
#define KVFRAME_STRINGIFY_(x) #x
#define KVFRAME_STRINGIFY(x) KVFRAME_STRINGIFY_(x)
  const std::string ondemand = KVFRAME_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION);
  out << "\nsimdjson kernels: DOM parse " << simdjson::get_active_implementation()->name()
      << " (chosen at run time); ondemand " << ondemand << " (compiled in)\n";
  if (ondemand == "fallback") {
    out << "  note: ondemand runs the scalar fallback kernel: the compile flags lack one of\n"
           "  AVX2, BMI, LZCNT, PCLMUL (-march=x86-64-v3 has no PCLMUL); KVFRAME_MARCH=haswell\n"
           "  gives the haswell kernel.\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return kvframe::kExitUsage;
  std::vector<Workload> workloads;  // built before registering: benchmarks refer to them
  try {
    // 16 transitions: enough distinct frames that patch benchmarks rarely restart.
    workloads.push_back(kvframe::bench::moba_workload(1 << 20, 16));
    workloads.push_back(kvframe::bench::holdem_workload());
  } catch (const std::exception& e) {
    std::cerr << "bench_json_blocker: cannot make the sample frames: " << e.what() << "\n";
    return kvframe::kExitFailed;
  }
  for (const Workload& workload : workloads) {
    std::cout << workload.name << ": " << workload.frames.size() << " frames, first "
              << workload.previous().size() << " bytes\n";
    register_benchmarks(workload);
  }
  const auto color = isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                           : benchmark::ConsoleReporter::OO_Tabular;
  kvframe::bench::SummaryReporter reporter(color);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_kernels(std::cout);
  reporter.print_summary(std::cout, kReference);
  benchmark::Shutdown();
  return kvframe::kExitOk;
}
