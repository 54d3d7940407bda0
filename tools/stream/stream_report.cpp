#include "stream_report.h"

#include <nlohmann/json.hpp>

namespace kvframe::tools {

using Json = nlohmann::ordered_json;

void StreamReport::print_header() const {
  std::fprintf(out_, "%6s %9s %9s %7s %7s %6s %6s %6s %6s %8s %8s %8s %7s %7s %5s\n", "frame",
               "bytes", "fed", "blocks", "unchg", "chg", "add", "rem", "moved", "%chg", "patch_ms",
               "part_ms", "diff_ms", "changes", "mism");
}

void StreamReport::add(const FrameRow& row) {
  if (frames_ == 0 && !json_) print_header();
  ++frames_;
  mismatches_ += row.mismatches;
  blocker_ms_ += row.patch_ms + row.partition_ms + row.diff_ms;
  if (row.frame > 0) {
    ++later_frames_;
    blocks_ += double(row.blocks);
    dirty_ += double(row.changed + row.added);
    changed_percent_ += row.changed_percent;
  }
  if (json_) {
    Json line = {{"frame", row.frame},         {"bytes", row.bytes},
                 {"fed_bytes", row.fed_bytes}, {"blocks", row.blocks},
                 {"unchanged", row.unchanged}, {"changed", row.changed},
                 {"added", row.added},         {"removed", row.removed},
                 {"moved", row.moved},         {"changed_percent", row.changed_percent},
                 {"patch_ms", row.patch_ms},   {"partition_ms", row.partition_ms},
                 {"diff_ms", row.diff_ms},     {"changes", row.changes},
                 {"mismatches", row.mismatches}};
    std::fprintf(out_, "%s\n", line.dump().c_str());
    return;
  }
  std::fprintf(out_, "%6llu %9zu %9zu %7zu %7zu %6zu %6zu %6zu %6zu %8.3f %8.3f %8.3f %7.3f %7zu %5zu\n",
               static_cast<unsigned long long>(row.frame), row.bytes, row.fed_bytes, row.blocks,
               row.unchanged, row.changed, row.added, row.removed, row.moved, row.changed_percent,
               row.patch_ms, row.partition_ms, row.diff_ms, row.changes, row.mismatches);
}

void StreamReport::finish(double wall_ms) const {
  const double later = later_frames_ ? double(later_frames_) : 1.0;
  const double per_frame_ms = frames_ ? blocker_ms_ / double(frames_) : 0.0;
  if (json_) {
    Json summary = {{"frames", frames_},
                    {"mean_blocks", blocks_ / later},
                    {"mean_dirty_blocks", dirty_ / later},
                    {"mean_changed_percent", changed_percent_ / later},
                    {"blocker_ms_total", blocker_ms_},
                    {"blocker_ms_per_frame", per_frame_ms},
                    {"wall_ms", wall_ms},
                    {"mismatches", mismatches_}};
    std::fprintf(out_, "%s\n", Json{{"summary", summary}}.dump().c_str());
    return;
  }
  std::fprintf(out_,
               "\n%zu frames; over frames 1..%zu: mean blocks %.1f, mean dirty blocks %.1f "
               "(changed + added), mean bytes changed %.3f%%\n"
               "json_blocker time (patch + partition + diff): %.1f ms total, %.3f ms per frame; "
               "wall time %.1f ms (generation included)\n"
               "mismatches: %zu%s\n",
               frames_, later_frames_, blocks_ / later, dirty_ / later, changed_percent_ / later,
               blocker_ms_, per_frame_ms, wall_ms, mismatches_,
               mismatches_ ? " (dirty blocks differ from the blocks holding the changes)" : "");
}

}  // namespace kvframe::tools
