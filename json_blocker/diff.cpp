#include "kvframe/json_blocker/diff.h"

#include <algorithm>
#include <string_view>

namespace kvframe::json_blocker {

const char* change_name(Change change) {
  switch (change) {
    case Change::kUnchanged: return "unchanged";
    case Change::kChanged: return "changed";
    case Change::kAdded: return "added";
    case Change::kRemoved: return "removed";
    case Change::kMoved: return "moved";
  }
  return "unknown";
}

namespace {

// Marks, among `sequence` (previous indices in current order), the members of
// one longest increasing subsequence: the blocks that kept their relative order.
std::vector<bool> longest_increasing(const std::vector<long>& sequence) {
  std::vector<std::size_t> tails;                       // positions of pile tops
  std::vector<long> before(sequence.size(), -1);        // predecessor in the chain
  for (std::size_t i = 0; i < sequence.size(); ++i) {
    auto it = std::lower_bound(tails.begin(), tails.end(), sequence[i],
                               [&](std::size_t t, long v) { return sequence[t] < v; });
    if (it != tails.begin()) before[i] = static_cast<long>(*(it - 1));
    if (it == tails.end()) {
      tails.push_back(i);
    } else {
      *it = i;
    }
  }
  std::vector<bool> kept(sequence.size(), false);
  for (long i = tails.empty() ? -1 : static_cast<long>(tails.back()); i >= 0; i = before[i]) {
    kept[static_cast<std::size_t>(i)] = true;
  }
  return kept;
}

// Finds blocks of the previous frame by id: a sorted (id hash, index) table,
// tried after the cheaper guess that the block sits right after the last match.
class PreviousIds {
 public:
  explicit PreviousIds(const Partition& previous) : previous_(previous) {
    table_.reserve(previous.size());
    for (std::size_t j = 0; j < previous.size(); ++j) table_.emplace_back(previous[j].id_hash, j);
    std::sort(table_.begin(), table_.end());
  }

  long find(const Block& block) {
    if (guess_ < previous_.size() && same_id(previous_[guess_], block)) return matched(guess_);
    auto it = std::lower_bound(table_.begin(), table_.end(), std::make_pair(block.id_hash, std::size_t{0}));
    for (; it != table_.end() && it->first == block.id_hash; ++it) {
      if (same_id(previous_[it->second], block)) return matched(it->second);
    }
    return -1;
  }

 private:
  static bool same_id(const Block& a, const Block& b) { return a.id_hash == b.id_hash && a.id == b.id; }
  long matched(std::size_t j) {
    guess_ = j + 1;
    return static_cast<long>(j);
  }

  const Partition& previous_;
  std::vector<std::pair<std::uint64_t, std::size_t>> table_;
  std::size_t guess_ = 0;
};

}  // namespace

FrameDiff diff(const Partition& previous, const Partition& current) {
  FrameDiff out;
  PreviousIds previous_ids(previous);
  std::vector<bool> still_there(previous.size(), false);
  std::vector<long> common_previous;  // previous index of each common block, current order
  std::vector<std::size_t> common_at;  // its entry in out.blocks
  out.blocks.reserve(current.size() + 8);
  for (std::size_t i = 0; i < current.size(); ++i) {
    const Block& block = current[i];
    BlockChange change{Change::kAdded, -1, static_cast<long>(i)};
    const long j = previous_ids.find(block);
    if (j >= 0) {
      const Block& before = previous[static_cast<std::size_t>(j)];
      change.previous = j;
      // The hash decides almost always; the text compare makes it exact.
      const bool same = before.hash == block.hash && before.text == block.text;
      change.change = same ? Change::kUnchanged : Change::kChanged;
      still_there[static_cast<std::size_t>(j)] = true;
      common_previous.push_back(j);
      common_at.push_back(out.blocks.size());
    }
    if (change.change != Change::kUnchanged) out.bytes_changed += block.text.size();
    out.blocks.push_back(change);
  }
  const std::vector<bool> in_order = longest_increasing(common_previous);
  for (std::size_t k = 0; k < common_at.size(); ++k) {
    BlockChange& change = out.blocks[common_at[k]];
    if (!in_order[k] && change.change == Change::kUnchanged) change.change = Change::kMoved;
  }
  for (std::size_t j = 0; j < previous.size(); ++j) {
    if (!still_there[j]) out.blocks.push_back({Change::kRemoved, static_cast<long>(j), -1});
  }
  for (const BlockChange& change : out.blocks) {
    switch (change.change) {
      case Change::kUnchanged: ++out.unchanged; break;
      case Change::kChanged: ++out.changed; break;
      case Change::kAdded: ++out.added; break;
      case Change::kRemoved: ++out.removed; break;
      case Change::kMoved: ++out.moved; break;
    }
  }
  out.bytes_total = current.text_bytes();
  return out;
}

}  // namespace kvframe::json_blocker
