// kvframe-blocks: shows how json_blocker cuts one gamecore frame into blocks,
// which blocks changed between two frames, or, with --stream, how much of each
// frame of a whole stream is re-encoded and which paths cause it.
#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "kvframe/common/exit_codes.h"
#include "kvframe/json_blocker/json_blocker.h"
#include "frame_source.h"
#include "read_input.h"
#include "report.h"
#include "stream_stats.h"

namespace {

namespace jb = kvframe::json_blocker;
using kvframe::tools::input_name;

// 3 for "differ" follows diff(1)/cmp(1) in spirit (a comparison that ran fine
// but found a difference is not success) without reusing their 1, which most
// tools, CLI11's usage errors included, mean as plain failure: a script can
// tell "differ" from "could not compare" without reading stderr.

constexpr const char* kExitCodesHelp =
    "Exit status:\n"
    "  0  success; with --prev: the frames have the same blocks (whitespace or\n"
    "     other byte-level differences that leave every block's text equal count\n"
    "     as no change)\n"
    "  1  usage error (unknown option, neither or both of FRAME and --stream,\n"
    "     '-' given twice)\n"
    "  2  input error: a file is unreadable, a frame is not valid JSON or breaks\n"
    "     a limit, the rules are invalid, or a --stream holds no frame; the\n"
    "     reason (with --stream: the frame's line or file) is printed on stderr\n"
    "  4  only with --prev: the frames differ (some block changed, was added,\n"
    "     removed or moved), like diff(1)'s 1. Scripts under `set -e` must\n"
    "     accept 4 explicitly, e.g. `kvframe-blocks A --prev B || [ $? -eq 4 ]`.\n"
    "     --stream never exits 4: frames of a stream are expected to differ.";

struct Options {
  std::string frame;     // empty with --stream
  std::string stream;    // empty: one FRAME
  std::size_t top = 10;  // --stream: paths listed
  std::string rules;     // empty: the default rules
  std::string previous;  // empty: list blocks instead of diffing
  bool json = false;
  bool text = false;
};

enum class Role { kFrame, kStream, kRules };

// What the user can do about an error, beyond the error's own message.
const char* next_step(const jb::Error& error, Role role) {
  switch (error.code) {
    case kvframe::ErrorCode::kIo:
      return role == Role::kStream
                 ? "check the path and its permissions; a stream is a JSONL file (one frame per "
                   "line) or a folder of *.json frame files; use - to read standard input"
                 : "check the path and its permissions; use - to read standard input";
    case kvframe::ErrorCode::kInvalidRules:
      return "fix the rules file (every field is optional; see docs/json_blocker.md), or "
             "leave out --rules to use the defaults";
    case kvframe::ErrorCode::kTooDeep:
    case kvframe::ErrorCode::kTooLarge:
      return "if the frame is legitimately this big, raise \"limits\" in a rules file and "
             "pass it with --rules";
    default:
      if (role == Role::kRules) return "fix the rules file at the byte shown";
      return role == Role::kStream
                 ? "fix the game's serializer (or the file) at the byte shown; each line of a "
                   "JSONL stream, or each file of a folder, must hold exactly one whole frame"
                 : "fix the game's serializer (or the file) at the byte shown; each file must "
                   "hold exactly one whole frame";
  }
}

int report_input_error(const std::string& path, const jb::Error& error, Role role, bool json) {
  std::cerr << "kvframe-blocks: " << input_name(path) << ": " << error.to_string() << "\n"
            << "  next: " << next_step(error, role) << "\n";
  if (json) {
    nlohmann::ordered_json document = {{"error",
                                        {{"input", input_name(path)},
                                         {"code", kvframe::error_code_name(error.code)},
                                         {"offset", error.offset},
                                         {"message", error.message}}}};
    std::cout << document.dump(2) << "\n";
  }
  return kvframe::kExitBadInput;
}

// Reads and partitions one frame file; on failure reports it and sets `exit_code`.
std::optional<jb::Partition> read_frame(jb::Partitioner& partitioner, const std::string& path,
                                        bool json, int& exit_code) {
  auto bytes = kvframe::tools::read_input(path);
  if (!bytes) {
    exit_code = report_input_error(path, bytes.error(), Role::kFrame, json);
    return std::nullopt;
  }
  auto partition = partitioner.partition(bytes.value());
  if (!partition) {
    exit_code = report_input_error(path, partition.error(), Role::kFrame, json);
    return std::nullopt;
  }
  return std::move(partition).value();
}

std::optional<jb::Rules> read_rules(const std::string& path, bool json, int& exit_code) {
  if (path.empty()) return jb::Rules{};
  auto text = kvframe::tools::read_input(path);
  auto rules = text ? jb::parse_rules(text.value()) : jb::Result<jb::Rules>(text.error());
  if (!rules) {
    exit_code = report_input_error(path, rules.error(), Role::kRules, json);
    return std::nullopt;
  }
  return std::move(rules).value();
}

int run_stream(const Options& options) {
  int exit_code = kvframe::kExitOk;
  auto rules = read_rules(options.rules, options.json, exit_code);
  if (!rules) return exit_code;
  auto source = kvframe::tools::FrameSource::open(options.stream);
  if (!source) return report_input_error(options.stream, source.error(), Role::kStream, options.json);
  jb::FrameStream stream(std::move(*rules));
  kvframe::tools::StreamStats stats;
  std::string frame, where;
  while (true) {
    auto more = source->next(frame, where);
    if (!more) {
      return report_input_error(where.empty() ? options.stream : where, more.error(), Role::kStream,
                                options.json);
    }
    if (!more.value()) break;
    auto diff = stream.push_whole(frame);
    if (!diff) return report_input_error(where, diff.error(), Role::kStream, options.json);
    stats.add(where, stream.current(), diff.value());
  }
  if (stats.frames() == 0) {
    const jb::Error empty{kvframe::ErrorCode::kIo, 0,
                          "no frames: a JSONL file needs one frame per line, a folder *.json files"};
    return report_input_error(options.stream, empty, Role::kStream, options.json);
  }
  if (options.json) {
    std::cout << stats.to_json(options.top).dump(2) << "\n";
  } else {
    stats.print(std::cout, options.top);
  }
  return kvframe::kExitOk;
}

int run(const Options& options) {
  if (!options.stream.empty()) return run_stream(options);
  int exit_code = kvframe::kExitOk;
  auto rules = read_rules(options.rules, options.json, exit_code);
  if (!rules) return exit_code;
  jb::Partitioner partitioner(std::move(*rules));
  std::optional<jb::Partition> previous;
  if (!options.previous.empty()) {
    previous = read_frame(partitioner, options.previous, options.json, exit_code);
    if (!previous) return exit_code;
  }
  auto current = read_frame(partitioner, options.frame, options.json, exit_code);
  if (!current) return exit_code;

  if (!previous) {
    if (options.json) {
      std::cout << kvframe::tools::blocks_json(*current, options.text).dump(2) << "\n";
    } else if (options.text) {
      kvframe::tools::print_block_texts(std::cout, *current);
    } else {
      kvframe::tools::print_blocks(std::cout, *current);
    }
    return kvframe::kExitOk;
  }
  const jb::FrameDiff diff = jb::diff(*previous, *current);
  if (options.json) {
    std::cout << kvframe::tools::diff_json(*previous, *current, diff).dump(2) << "\n";
  } else {
    kvframe::tools::print_diff(std::cout, *previous, *current, diff);
  }
  const bool differ = diff.changed + diff.added + diff.removed + diff.moved > 0;
  return differ ? kvframe::kExitCheckFailed : kvframe::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Shows how json_blocker cuts a gamecore frame into blocks (index, bytes, hash, kind, "
      "id), or, with --prev, which blocks changed since the previous frame, or, with "
      "--stream, the share of blocks and tokens each frame of a stream re-encodes, the "
      "total, and the paths that change most."};
  app.footer(kExitCodesHelp);
  Options options;
  app.add_option("FRAME", options.frame, "frame JSON file, - for standard input");
  app.add_option("--rules", options.rules, "partition rules JSON file (default: built-in rules)");
  auto* previous = app.add_option("--prev", options.previous,
                                  "previous frame: print the diff from it instead of the blocks");
  auto* stream =
      app.add_option("--stream", options.stream,
                     "instead of FRAME, a stream: a JSONL file (one frame per line; - for standard "
                     "input) or a folder whose *.json files are frames in name order. Prints per "
                     "frame and in total the share of blocks and of tokens re-encoded (tokens "
                     "estimated from text bytes) and the paths that change most")
          ->excludes(previous);
  app.add_option("--top", options.top, "with --stream: how many paths to list (default 10)")
      ->needs(stream)
      ->check(CLI::PositiveNumber);
  app.add_flag("--json", options.json, "print one JSON document instead of a table");
  app.add_flag("--text", options.text,
               "the blocks' texts, one per line, as the model reads them (\"<path>: <json>\"); "
               "with --json, a \"text\" member per block")
      ->excludes(previous)
      ->excludes(stream);
  try {
    app.parse(argc, argv);
    if (options.frame.empty() == options.stream.empty()) {
      throw CLI::ValidationError("give either a FRAME or --stream INPUT");
    }
    const int stdin_users = (options.frame == "-") + (options.rules == "-") +
                            (options.previous == "-") + (options.stream == "-");
    if (stdin_users > 1) throw CLI::ValidationError("standard input (-) can be read only once");
  } catch (const CLI::ParseError& e) {
    return kvframe::usage_exit(app.exit(e));
  }
  return run(options);
}
