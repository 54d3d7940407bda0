#include "invariants.h"

#include <xxhash.h>

#include <cstdio>
#include <unordered_set>
#include <vector>

#include "reference.h"

namespace kvframe::fuzz {

using json_blocker::Block;
using json_blocker::BlockChange;
using json_blocker::BlockKind;
using json_blocker::Change;
using json_blocker::FrameDiff;
using json_blocker::Partition;
using json_blocker::Rules;

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
std::string in_quotes(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

// text = "<path>: <json>", where <path> is the id, or for a run of members the
// object holding them ("$" for the root).
void check_text_layout(const Block& block) {
  FUZZ_CHECK(block.prefix_size >= 2 && block.prefix_size <= block.text.size() &&
                 block.text.substr(block.prefix_size - 2, 2) == ": ",
             "block text does not start with '<path>: ': " + in_quotes(block.text));
  const std::string_view path = block.text.substr(0, block.prefix_size - 2);
  const std::string_view json = block.json();
  switch (block.kind) {
    case BlockKind::kValue:
      FUZZ_CHECK(path == block.id,
                 "value block text not prefixed by its id: " + in_quotes(block.text));
      break;
    case BlockKind::kElementRun:
      FUZZ_CHECK(path == block.id && starts_with(json, "["),
                 "element run text is not '<id>: [...]': " + in_quotes(block.text));
      break;
    case BlockKind::kMemberRun: {
      const std::string owner = path == "$" ? "" : std::string(path) + ".";
      FUZZ_CHECK(
          starts_with(block.id, owner + "{") && ends_with(block.id, "}") && starts_with(json, "{"),
          "member run id " + in_quotes(block.id) + " does not match its text " +
              in_quotes(block.text));
      break;
    }
  }
  FUZZ_CHECK(is_json(json), "block text is not '<path>: <JSON>': " + in_quotes(block.text));
}

// Without drops a block's text is its source bytes minified, so the source
// range and the text must tell the same story.
void check_text_matches_source(std::string_view input, const Block& block) {
  const std::string source = minified(input.substr(block.source.begin, block.source.size()));
  const std::string_view json = block.json();
  bool matches = false;
  switch (block.kind) {
    case BlockKind::kValue:  // an element's value, or a member's "key":value
      matches = source == json ||
                (starts_with(source, "\"") && ends_with(source, ":" + std::string(json)));
      break;
    case BlockKind::kMemberRun: matches = "{" + source + "}" == json; break;
    case BlockKind::kElementRun: matches = "[" + source + "]" == json; break;
  }
  FUZZ_CHECK(matches, "block " + in_quotes(block.id) + " text " + in_quotes(json) +
                          " is not its source range minified: " + in_quotes(source));
}

void check_pointer(simdjson::dom::element root, const Block& block) {
  simdjson::dom::element at;
  FUZZ_CHECK(root.at_pointer(block.pointer).get(at) == simdjson::SUCCESS,
             "block " + in_quotes(block.id) + " pointer " + in_quotes(block.pointer) +
                 " is not in the frame");
  FUZZ_CHECK(block.kind != BlockKind::kMemberRun || at.is_object(),
             "member run pointer " + in_quotes(block.pointer) + " is not an object");
  FUZZ_CHECK(block.kind != BlockKind::kElementRun || at.is_array(),
             "element run pointer " + in_quotes(block.pointer) + " is not an array");
}

void check_accepted(std::string_view input, const Partition& partition, const Rules& rules,
                    const FrameVerdict& verdict) {
  FUZZ_CHECK(partition.input_bytes() == input.size(), "input_bytes is not the input size");
  std::unordered_set<std::string_view> ids;
  std::size_t text_bytes = 0, previous_end = 0;
  for (std::size_t i = 0; i < partition.size(); ++i) {
    const Block& block = partition[i];
    FUZZ_CHECK(ids.insert(block.id).second, "two blocks with id " + in_quotes(block.id));
    FUZZ_CHECK(block.source.begin < block.source.end && block.source.end <= input.size(),
               "block " + in_quotes(block.id) + " source range is empty or past the input");
    FUZZ_CHECK(block.source.begin >= previous_end,
               "block " + in_quotes(block.id) + " source range overlaps or precedes the last one");
    previous_end = block.source.end;
    FUZZ_CHECK(partition.block_at(block.source.begin) == static_cast<long>(i) &&
                   partition.block_at(block.source.end - 1) == static_cast<long>(i),
               "block_at() does not find block " + in_quotes(block.id) + " in its own range");
    FUZZ_CHECK(block.hash == XXH3_64bits(block.text.data(), block.text.size()),
               "block " + in_quotes(block.id) + " hash is not XXH3-64 of its text");
    check_text_layout(block);
    if (rules.drop.empty()) check_text_matches_source(input, block);
    if (verdict.accept) check_pointer(verdict.root, block);
    text_bytes += block.text.size();
  }
  FUZZ_CHECK(text_bytes == partition.text_bytes(), "text_bytes is not the sum of block texts");

  const FrameDiff self = json_blocker::diff(partition, partition);
  check_diff(partition, partition, self);
  FUZZ_CHECK(self.unchanged == partition.size() && self.bytes_changed == 0,
             "a partition diffed with itself shows changes");
}

}  // namespace

void check_partition(std::string_view input, const Rules& rules) {
  const FrameVerdict verdict = judge_frame(input, rules.limits);
  auto partition = json_blocker::partition(input, rules);
  if (!partition) {
    const json_blocker::Error& error = partition.error();
    FUZZ_CHECK(!verdict.must_accept(),
               "partition rejected a frame the reference accepts: " + error.to_string());
    FUZZ_CHECK(error.offset <= input.size(), "error offset past the input: " + error.to_string());
    FUZZ_CHECK(!error.message.empty(), "error without a message");
    FUZZ_CHECK(!verdict.expected_error || error.code == *verdict.expected_error,
               std::string("expected ") + error_code_name(*verdict.expected_error) +
                   ", got " + error.to_string());
    return;
  }
  FUZZ_CHECK(!verdict.must_reject(), "partition accepted a frame the reference rejects");
  check_accepted(input, *partition, rules, verdict);
}

void check_blocks(std::string_view input, const Partition& partition, const Rules& rules) {
  const FrameVerdict verdict = judge_frame(input, rules.limits);
  FUZZ_CHECK(!verdict.must_reject(), "a frame was accepted that the reference rejects");
  check_accepted(input, partition, rules, verdict);
}

void check_diff(const Partition& previous, const Partition& current, const FrameDiff& diff) {
  FUZZ_CHECK(diff.blocks.size() == current.size() + diff.removed,
             "diff has not one entry per current block plus one per removed block");
  std::unordered_set<std::string_view> previous_ids, current_ids;
  for (const Block& block : previous.blocks()) previous_ids.insert(block.id);
  for (const Block& block : current.blocks()) current_ids.insert(block.id);

  std::vector<bool> accounted(previous.size(), false);  // kept or removed, once
  std::size_t counts[5] = {};
  std::size_t bytes_changed = 0;
  long last_in_order = -1;  // previous index of the last unchanged block
  for (std::size_t k = 0; k < diff.blocks.size(); ++k) {
    const BlockChange& change = diff.blocks[k];
    ++counts[static_cast<int>(change.change)];
    const bool is_current = k < current.size();
    FUZZ_CHECK(is_current
                   ? change.current == static_cast<long>(k) && change.change != Change::kRemoved
                   : change.current == -1 && change.change == Change::kRemoved,
               "diff entries are not current blocks in order, then removed ones");
    if (change.previous < 0) {
      FUZZ_CHECK(change.change == Change::kAdded, "a kept block has no previous index");
      FUZZ_CHECK(!previous_ids.count(current[k].id),
                 "block " + in_quotes(current[k].id) + " is 'added' but was in the previous frame");
      bytes_changed += current[k].text.size();
      continue;
    }
    const auto j = static_cast<std::size_t>(change.previous);
    FUZZ_CHECK(j < previous.size() && !accounted[j],
               "a previous block is matched twice or out of range");
    accounted[j] = true;
    const Block& before = previous[j];
    if (!is_current) {
      FUZZ_CHECK(!current_ids.count(before.id),
                 "block " + in_quotes(before.id) + " is 'removed' but is in the current frame");
      continue;
    }
    const Block& now = current[k];
    FUZZ_CHECK(before.id == now.id, "matched blocks have different ids");
    const bool same_text = before.text == now.text;
    switch (change.change) {
      case Change::kUnchanged:
        FUZZ_CHECK(same_text,
                   "block " + in_quotes(now.id) + " is 'unchanged' but its text changed");
        FUZZ_CHECK(change.previous > last_in_order,
                   "unchanged blocks are out of order; one of them should be 'moved'");
        last_in_order = change.previous;
        break;
      case Change::kMoved:
        FUZZ_CHECK(same_text, "block " + in_quotes(now.id) + " is 'moved' but its text changed");
        break;
      case Change::kChanged:
        FUZZ_CHECK(!same_text,
                   "block " + in_quotes(now.id) + " is 'changed' but its text is equal");
        bytes_changed += now.text.size();
        break;
      default: FUZZ_CHECK(false, "an added or removed entry has both indices");
    }
  }
  for (bool seen : accounted) FUZZ_CHECK(seen, "a previous block is neither kept nor removed");
  FUZZ_CHECK(counts[static_cast<int>(Change::kUnchanged)] == diff.unchanged &&
                 counts[static_cast<int>(Change::kChanged)] == diff.changed &&
                 counts[static_cast<int>(Change::kAdded)] == diff.added &&
                 counts[static_cast<int>(Change::kRemoved)] == diff.removed &&
                 counts[static_cast<int>(Change::kMoved)] == diff.moved,
             "diff counts do not match its entries");
  FUZZ_CHECK(bytes_changed == diff.bytes_changed,
             "bytes_changed is not the changed+added text size");
  FUZZ_CHECK(diff.bytes_total == current.text_bytes(), "bytes_total is not the current text size");
}

}  // namespace kvframe::fuzz
