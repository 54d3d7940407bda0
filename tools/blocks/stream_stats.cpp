#include "stream_stats.h"

#include <algorithm>

#include "table.h"

namespace kvframe::tools {

using json_blocker::BlockChange;
using json_blocker::Change;
using json_blocker::FrameDiff;
using json_blocker::Partition;
using Align = Table::Align;

namespace {

constexpr const char* kTokenEstimate =
    "estimated from block text bytes: kvframe-blocks loads no tokenizer, so tokens% is the "
    "share of text bytes";

// Index just past the string that starts at id[open] == '"'.
std::size_t past_quoted(std::string_view id, std::size_t open) {
  std::size_t k = open + 1;
  while (k < id.size() && id[k] != '"') k += id[k] == '\\' ? 2 : 1;
  return std::min(k + 1, id.size());
}

double share(std::size_t part, std::size_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

std::string path_pattern(std::string_view id) {
  std::string out;
  std::size_t i = 0;
  while (i < id.size()) {
    if (id[i] != '[') {
      out.push_back(id[i++]);
    } else if (i + 1 < id.size() && id[i + 1] == '"') {  // a quoted key, ["a b"]: a name, kept
      const std::size_t close = past_quoted(id, i + 1);
      out.append(id.substr(i, close + 1 - i));
      i = close + 1;
    } else {  // an element or element run: [3], [id=x], [id="x]y"], [id=x#2], [0..63]
      std::size_t j = i + 1;
      while (j < id.size() && id[j] != ']') j = id[j] == '"' ? past_quoted(id, j) : j + 1;
      out += "[*]";
      i = j + 1;
    }
  }
  return out;
}

void StreamStats::add(std::string source, const Partition& current, const FrameDiff& diff) {
  FrameCost cost;
  cost.source = std::move(source);
  cost.blocks = current.size();
  cost.changed = diff.changed;
  cost.added = diff.added;
  cost.removed = diff.removed;
  cost.bytes = diff.bytes_total;
  cost.dirty_bytes = diff.bytes_changed;
  const std::size_t number = frames_.size();
  frames_.push_back(std::move(cost));
  if (number == 0) return;  // every block is new: nothing to learn about the rules
  for (const BlockChange& change : diff.blocks) {
    if (change.change != Change::kChanged && change.change != Change::kAdded) continue;
    const auto& block = current[static_cast<std::size_t>(change.current)];
    PathCost& path = paths_[path_pattern(block.id)];
    if (path.frames == 0 || path.last_frame != number) {
      ++path.frames;
      path.last_frame = number;
    }
    ++path.blocks;
    path.bytes += block.text.size();
  }
}

StreamStats::Totals StreamStats::sum_after_first() const {
  Totals totals;
  for (std::size_t f = 1; f < frames_.size(); ++f) {
    const FrameCost& cost = frames_[f];
    ++totals.frames;
    totals.blocks += cost.blocks;
    totals.dirty += cost.dirty();
    totals.bytes += cost.bytes;
    totals.dirty_bytes += cost.dirty_bytes;
    totals.max_blocks_share = std::max(totals.max_blocks_share, share(cost.dirty(), cost.blocks));
    totals.max_bytes_share = std::max(totals.max_bytes_share, share(cost.dirty_bytes, cost.bytes));
  }
  return totals;
}

std::vector<std::pair<std::string, StreamStats::PathCost>> StreamStats::top_paths(std::size_t top) const {
  std::vector<std::pair<std::string, PathCost>> paths(paths_.begin(), paths_.end());
  // Ties broken by path so the report is the same on every run.
  std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) {
    return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes : a.first < b.first;
  });
  if (paths.size() > top) paths.resize(top);
  return paths;
}

void StreamStats::print(std::ostream& out, std::size_t top) const {
  Table frames({{"frame", Align::kRight},
                {"blocks", Align::kRight},
                {"changed", Align::kRight},
                {"added", Align::kRight},
                {"removed", Align::kRight},
                {"blocks%", Align::kRight},
                {"bytes", Align::kRight},
                {"re-encoded", Align::kRight},
                {"tokens%", Align::kRight},
                {"source", Align::kLeft}});
  for (std::size_t f = 0; f < frames_.size(); ++f) {
    const FrameCost& cost = frames_[f];
    frames.add_row({std::to_string(f), std::to_string(cost.blocks), std::to_string(cost.changed),
                    std::to_string(cost.added), std::to_string(cost.removed),
                    percent(share(cost.dirty(), cost.blocks)), std::to_string(cost.bytes),
                    std::to_string(cost.dirty_bytes), percent(share(cost.dirty_bytes, cost.bytes)),
                    cost.source});
  }
  frames.print(out);
  out << "blocks% = changed + added blocks of the frame's blocks; tokens% " << kTokenEstimate << "\n";
  const Totals totals = sum_after_first();
  if (totals.frames == 0) {
    out << "one frame: nothing to compare it with\n";
    return;
  }
  out << "\nframes 1.." << totals.frames << " (frame 0 encodes every block once and is left out):\n"
      << "  blocks re-encoded: " << totals.dirty << " of " << totals.blocks << " ("
      << percent(share(totals.dirty, totals.blocks)) << "), at most "
      << percent(totals.max_blocks_share) << " of a frame\n"
      << "  tokens re-encoded: " << percent(share(totals.dirty_bytes, totals.bytes)) << " ("
      << totals.dirty_bytes << " of " << totals.bytes << " text bytes), at most "
      << percent(totals.max_bytes_share) << " of a frame\n";
  const auto paths = top_paths(top);
  if (paths.empty()) return;
  out << "\npaths that change most (element keys and indices as [*]; candidates for quantize, "
         "arrays or drop rules):\n";
  Table table({{"frames", Align::kRight},
               {"frames%", Align::kRight},
               {"re-encodes", Align::kRight},
               {"bytes", Align::kRight},
               {"of all", Align::kRight},
               {"path", Align::kLeft}});
  for (const auto& [path, cost] : paths) {
    table.add_row({std::to_string(cost.frames), percent(share(cost.frames, totals.frames)),
                   std::to_string(cost.blocks), std::to_string(cost.bytes),
                   percent(share(cost.bytes, totals.dirty_bytes)), path});
  }
  table.print(out);
}

nlohmann::ordered_json StreamStats::to_json(std::size_t top) const {
  auto frames = nlohmann::ordered_json::array();
  for (std::size_t f = 0; f < frames_.size(); ++f) {
    const FrameCost& cost = frames_[f];
    frames.push_back({{"frame", f},
                      {"source", cost.source},
                      {"blocks", cost.blocks},
                      {"changed", cost.changed},
                      {"added", cost.added},
                      {"removed", cost.removed},
                      {"blocks_share", share(cost.dirty(), cost.blocks)},
                      {"bytes", cost.bytes},
                      {"bytes_reencoded", cost.dirty_bytes},
                      {"tokens_share", share(cost.dirty_bytes, cost.bytes)}});
  }
  nlohmann::ordered_json document = {{"frames", std::move(frames)}, {"tokens", kTokenEstimate}};
  const Totals totals = sum_after_first();
  if (totals.frames == 0) {
    document["total"] = nullptr;
    document["top_paths"] = nlohmann::ordered_json::array();
    return document;
  }
  document["total"] = {{"frames", totals.frames},
                       {"blocks", totals.blocks},
                       {"blocks_reencoded", totals.dirty},
                       {"blocks_share", share(totals.dirty, totals.blocks)},
                       {"max_blocks_share", totals.max_blocks_share},
                       {"bytes", totals.bytes},
                       {"bytes_reencoded", totals.dirty_bytes},
                       {"tokens_share", share(totals.dirty_bytes, totals.bytes)},
                       {"max_tokens_share", totals.max_bytes_share}};
  auto paths = nlohmann::ordered_json::array();
  for (const auto& [path, cost] : top_paths(top)) {
    paths.push_back({{"path", path},
                     {"frames", cost.frames},
                     {"frames_share", share(cost.frames, totals.frames)},
                     {"reencodes", cost.blocks},
                     {"bytes", cost.bytes},
                     {"bytes_share", share(cost.bytes, totals.dirty_bytes)}});
  }
  document["top_paths"] = std::move(paths);
  return document;
}

}  // namespace kvframe::tools
