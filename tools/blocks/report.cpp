#include "report.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "table.h"

namespace kvframe::tools {

using json_blocker::Block;
using json_blocker::BlockChange;
using json_blocker::BlockKind;
using json_blocker::Change;
using json_blocker::FrameDiff;
using json_blocker::Partition;
using Align = Table::Align;

namespace {

std::string hash_hex(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, hash);
  return text;
}

std::string index_or_dash(long index) {
  return index < 0 ? "-" : std::to_string(index);
}

// A removed block exists only in the previous frame; every other change names
// a block of the current one.
const Block& changed_block(const BlockChange& change, const Partition& previous,
                           const Partition& current) {
  return change.change == Change::kRemoved ? previous[static_cast<std::size_t>(change.previous)]
                                           : current[static_cast<std::size_t>(change.current)];
}

nlohmann::ordered_json index_json(long index) {
  return index < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(index);
}

}  // namespace

void print_blocks(std::ostream& out, const Partition& frame) {
  Table table({{"index", Align::kRight},
               {"bytes", Align::kRight},
               {"hash", Align::kLeft},
               {"kind", Align::kLeft},
               {"id", Align::kLeft}});
  for (std::size_t i = 0; i < frame.size(); ++i) {
    const Block& block = frame[i];
    table.add_row({std::to_string(i), std::to_string(block.text.size()), hash_hex(block.hash),
                   json_blocker::block_kind_name(block.kind), std::string(block.id)});
  }
  table.print(out);
  out << frame.size() << " blocks, " << frame.input_bytes() << " input bytes, "
      << frame.text_bytes() << " text bytes\n";
}

void print_block_texts(std::ostream& out, const Partition& frame) {
  for (std::size_t i = 0; i < frame.size(); ++i) out << frame[i].text << "\n";
}

nlohmann::ordered_json blocks_json(const Partition& frame, bool with_text) {
  auto blocks = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < frame.size(); ++i) {
    const Block& block = frame[i];
    blocks.push_back({{"index", i},
                      {"id", block.id},
                      {"bytes", block.text.size()},
                      {"hash", hash_hex(block.hash)},
                      {"kind", json_blocker::block_kind_name(block.kind)}});
    if (with_text) blocks.back()["text"] = block.text;
  }
  return {{"blocks", std::move(blocks)},
          {"summary",
           {{"blocks", frame.size()},
            {"input_bytes", frame.input_bytes()},
            {"text_bytes", frame.text_bytes()}}}};
}

void print_diff(std::ostream& out, const Partition& previous, const Partition& current,
                const FrameDiff& diff) {
  Table table({{"change", Align::kLeft},
               {"prev", Align::kRight},
               {"cur", Align::kRight},
               {"bytes", Align::kRight},
               {"id", Align::kLeft}});
  for (const BlockChange& change : diff.blocks) {
    if (change.change == Change::kUnchanged) continue;
    const Block& block = changed_block(change, previous, current);
    table.add_row({json_blocker::change_name(change.change), index_or_dash(change.previous),
                   index_or_dash(change.current), std::to_string(block.text.size()),
                   std::string(block.id)});
  }
  if (!table.empty()) table.print(out);
  out << diff.changed << " changed, " << diff.added << " added, " << diff.removed << " removed, "
      << diff.moved << " moved, " << diff.unchanged << " unchanged; " << diff.bytes_changed
      << " of " << diff.bytes_total << " text bytes changed (" << percent(diff.changed_fraction())
      << ")\n";
}

nlohmann::ordered_json diff_json(const Partition& previous, const Partition& current,
                                 const FrameDiff& diff) {
  auto changes = nlohmann::ordered_json::array();
  for (const BlockChange& change : diff.blocks) {
    if (change.change == Change::kUnchanged) continue;
    const Block& block = changed_block(change, previous, current);
    changes.push_back({{"change", json_blocker::change_name(change.change)},
                       {"previous", index_json(change.previous)},
                       {"current", index_json(change.current)},
                       {"bytes", block.text.size()},
                       {"id", block.id}});
  }
  return {{"changes", std::move(changes)},
          {"summary",
           {{"changed", diff.changed},
            {"added", diff.added},
            {"removed", diff.removed},
            {"moved", diff.moved},
            {"unchanged", diff.unchanged},
            {"bytes_changed", diff.bytes_changed},
            {"bytes_total", diff.bytes_total},
            {"changed_fraction", diff.changed_fraction()}}}};
}

}  // namespace kvframe::tools
