// kvframe-stream: generate a MOBA frame stream, push it through json_blocker's
// FrameStream, and report per frame what the diff says changed — checking it
// against what the generator actually changed.

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "frame_files.h"
#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "kvframe/json_blocker/json_blocker.h"
#include "moba/block_check.h"
#include "moba/moba_stream.h"
#include "stream_report.h"

namespace {

namespace jb = kvframe::json_blocker;
namespace moba = kvframe::examples::moba;

// How each frame after the first reaches FrameStream (the first is always whole).
enum class Delta { kWhole, kMergePatch, kJsonPatch };
const std::map<std::string, Delta> kDeltaNames = {
    {"whole", Delta::kWhole}, {"merge", Delta::kMergePatch}, {"json-patch", Delta::kJsonPatch}};

struct Options {
  std::uint64_t frames = 100;
  std::uint64_t seed = 1;
  std::optional<std::size_t> frame_kb;
  double change_rate = moba::StreamParams{}.change_rate;
  std::string rules = KVFRAME_MOBA_RULES_FILE;
  Delta delta = Delta::kWhole;  // from --delta, by kDeltaNames
  std::string write_dir;
  bool json = false;
  std::optional<double> population;
  std::string dataset;
  std::uint64_t dataset_every = 1;
  std::string instruction = moba::kCasterInstruction;
};

// Appends a frame to --dataset as a kvframe-finetune record without a target
// (`kvframe-finetune distill` takes it from the model in full mode).
void write_record(std::ofstream& out, const Options& options, std::uint64_t n, const std::string& frame_json) {
  // Ordered, so the record's frame reads in the order the stream sent it.
  const nlohmann::ordered_json record = {{"id", "moba-s" + std::to_string(options.seed) + "-f" + std::to_string(n)},
                                         {"frame", nlohmann::ordered_json::parse(frame_json)},
                                         {"instruction", options.instruction},
                                         {"target", ""}};
  out << record.dump() << '\n';
}

jb::PatchFormat patch_format(Delta delta) {
  return delta == Delta::kMergePatch ? jb::PatchFormat::kMergePatch : jb::PatchFormat::kJsonPatch;
}

void print_mismatches(std::uint64_t frame, const moba::BlockCheck& check) {
  constexpr std::size_t kShown = 5;  // per kind: enough to start debugging
  auto print = [&](const std::vector<std::string>& items, const char* what) {
    for (std::size_t i = 0; i < items.size() && i < kShown; ++i) {
      std::fprintf(stderr, "frame %llu: %s: %s\n", static_cast<unsigned long long>(frame), what,
                   items[i].c_str());
    }
  };
  print(check.unreported, "block holds a change but the diff calls it unchanged");
  print(check.unexplained, "diff reports a block that holds no change");
  print(check.unlocated, "changed pointer lies in no block");
}

kvframe::tools::FrameRow make_row(std::uint64_t n, const moba::Frame& frame, std::size_t fed_bytes,
                                  const jb::FrameStream& stream, const jb::FrameDiff& diff,
                                  std::size_t mismatches) {
  const jb::FrameTimings& timings = stream.last_timings();
  kvframe::tools::FrameRow row;
  row.frame = n;
  row.bytes = stream.text().size();
  row.fed_bytes = fed_bytes;
  row.blocks = stream.current().size();
  row.unchanged = diff.unchanged;
  row.changed = diff.changed;
  row.added = diff.added;
  row.removed = diff.removed;
  row.moved = diff.moved;
  row.changed_percent = 100.0 * diff.changed_fraction();
  row.patch_ms = timings.patch_ms;
  row.partition_ms = timings.partition_ms;
  row.diff_ms = timings.diff_ms;
  row.changes = frame.changes.size();
  row.mismatches = mismatches;
  return row;
}

int run(const Options& options, jb::Rules rules) {
  moba::StreamParams params = options.population ? moba::scaled_params(*options.population, options.seed, 0)
                              : options.frame_kb  ? moba::params_for_bytes(*options.frame_kb * 1024, options.seed)
                                                  : moba::StreamParams{};
  params.seed = options.seed;
  params.change_rate = options.change_rate;
  std::ofstream dataset;
  if (!options.dataset.empty()) {
    const auto folder = std::filesystem::absolute(options.dataset).parent_path();
    std::error_code made;
    std::filesystem::create_directories(folder, made);
    if (!made) std::filesystem::copy_file(options.rules, folder / "rules.json",
                                          std::filesystem::copy_options::overwrite_existing, made);
    dataset.open(options.dataset, std::ios::app);
    if (made || !dataset) {
      std::fprintf(stderr, "kvframe-stream: cannot write %s and rules.json beside it\n", options.dataset.c_str());
      return kvframe::kExitBadInput;
    }
  }
  if (!options.write_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.write_dir, error);
    if (error) {
      std::fprintf(stderr, "kvframe-stream: cannot create %s: %s\n", options.write_dir.c_str(),
                   error.message().c_str());
      return kvframe::kExitBadInput;
    }
  }

  const auto start = std::chrono::steady_clock::now();
  moba::StreamGenerator generator(params);
  jb::FrameStream stream(std::move(rules));
  kvframe::tools::StreamReport report(stdout, options.json);
  std::string previous_text;  // the text stream.previous() was cut from
  for (std::uint64_t n = 0; n < options.frames; ++n) {
    const moba::Frame frame = generator.next();
    const bool whole = options.delta == Delta::kWhole || n == 0;
    const std::string& fed = whole ? frame.json
                             : options.delta == Delta::kMergePatch ? frame.merge_patch
                                                                    : frame.json_patch;
    auto result = whole ? stream.push_whole(fed) : stream.push_patch(fed, patch_format(options.delta));
    if (!result) {
      std::fprintf(stderr, "kvframe-stream: frame %llu rejected: %s\n",
                   static_cast<unsigned long long>(n), result.error().to_string().c_str());
      return kvframe::kExitBadInput;
    }
    const jb::FrameDiff& diff = result.value();
    moba::BlockCheck check;
    if (n > 0) {
      check = moba::check_blocks(frame.changes, previous_text, stream.previous(), stream.text(),
                                 stream.current(), diff);
      print_mismatches(n, check);
    }
    report.add(make_row(n, frame, fed.size(), stream, diff, check.mismatches()));
    if (!options.write_dir.empty()) {
      const char* patch_name = whole ? "" : jb::patch_format_name(patch_format(options.delta));
      const std::string error = kvframe::tools::write_frame_files(options.write_dir, frame,
                                                                  patch_name, whole ? "" : fed);
      if (!error.empty()) {
        std::fprintf(stderr, "kvframe-stream: %s\n", error.c_str());
        return kvframe::kExitBadInput;
      }
    }
    if (dataset.is_open() && n % options.dataset_every == 0) write_record(dataset, options, n, frame.json);
    previous_text = stream.text();
  }
  const std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - start;
  report.finish(wall.count());
  return report.mismatches() ? kvframe::kExitCheckFailed : kvframe::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "Generates a deterministic MOBA gamecore frame stream (10 heroes, ~240 units, towers, "
      "shop, event log), feeds it to json_blocker's FrameStream and prints, per frame, how many "
      "blocks the diff finds unchanged, changed, added, removed or moved. Each frame is also "
      "checked: the blocks the diff reports dirty or removed must be exactly those holding the "
      "generator's changed values.",
      "kvframe-stream"};
  app.footer(
      "Exit status: 0 ok; 1 usage error; 2 unreadable or invalid rules file, a rejected frame, "
      "or an unwritable --write directory; 4 the diff disagreed with the generator on some "
      "frame (details on stderr).");
  app.option_defaults()->always_capture_default();
  app.add_option("-n,--frames", options.frames, "Number of frames to generate")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000}));
  app.add_option("--seed", options.seed, "Generator seed; the same seed gives the same frames");
  app.add_option("--frame-kb", options.frame_kb,
                 "Target frame size in KiB (scales units and the event log); without it "
                 "frames are about 160 KiB")
      ->check(CLI::Range(std::size_t{64}, std::size_t{65536}));
  app.add_option("--change-rate", options.change_rate,
                 "Fraction of heroes, units and towers changed per frame (0.005..0.05 realistic)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--rules", options.rules, "Partition rules file (JSON)");
  std::string delta = "whole";
  app.add_option("--delta", delta,
                 "How frames after the first are fed: whole frames, RFC 7386 merge patches, or "
                 "RFC 6902 JSON patches")
      ->check(CLI::IsMember(kDeltaNames));
  app.add_option("--write", options.write_dir,
                 "Also save frame_NNNN.json, frame_NNNN.changes.json and the fed patch in DIR")
      ->type_name("DIR");
  app.add_flag("--json", options.json, "One JSON object per frame line, then a summary object");
  app.add_option("--population", options.population,
                 "Scale the match's population (heroes, units, towers, events) by this factor instead of "
                 "--frame-kb: 0.01 gives ~12 KiB frames (the shop catalog and heroes stay), 1 the default match")
      ->check(CLI::Range(0.01, 64.0));
  app.add_option("--dataset", options.dataset,
                 "Append frames to this JSONL file as kvframe-finetune records (no target: distill fills it); "
                 "the rules go beside it as rules.json");
  app.add_option("--dataset-every", options.dataset_every, "Record every Nth frame")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000}));
  app.add_option("--instruction", options.instruction, "The task of the --dataset records");
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;
  options.delta = kDeltaNames.at(delta);

  auto rules = jb::load_rules(options.rules);
  if (!rules) {
    std::fprintf(stderr, "kvframe-stream: rules: %s\n", rules.error().to_string().c_str());
    return kvframe::kExitBadInput;
  }
  return run(options, std::move(rules).value());
}
