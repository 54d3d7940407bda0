#include "moba/block_check.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

#include "moba/value_locator.h"

namespace kvframe::examples::moba {

namespace jb = kvframe::json_blocker;

namespace {

// One frame's text and blocks; the locator is built on first use (a frame
// without removals never needs the previous frame's).
class FrameBlocks {
 public:
  FrameBlocks(std::string_view text, const jb::Partition& partition)
      : text_(text), partition_(partition) {}

  // Id of the block holding the value at `pointer`, if any.
  std::optional<std::string> block_holding(std::string_view pointer) {
    if (!locator_) locator_.emplace(text_);
    const auto offset = locator_->offset_of(pointer);
    if (!offset) return std::nullopt;
    const long block = partition_.block_at(*offset);
    if (block < 0) return std::nullopt;
    return std::string(partition_[static_cast<std::size_t>(block)].id);
  }

 private:
  std::string_view text_;
  const jb::Partition& partition_;
  std::optional<ValueLocator> locator_;
};

std::vector<std::string> difference(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

BlockCheck check_blocks(const std::vector<PathChange>& changes, std::string_view previous_text,
                        const jb::Partition& previous, std::string_view current_text,
                        const jb::Partition& current, const jb::FrameDiff& diff) {
  BlockCheck check;
  FrameBlocks before(previous_text, previous), after(current_text, current);
  std::set<std::string> expected;
  for (const PathChange& change : changes) {
    FrameBlocks& frame = change.kind == PathChange::Kind::kRemoved ? before : after;
    if (auto id = frame.block_holding(change.pointer)) {
      expected.insert(std::move(*id));
    } else {
      check.unlocated.push_back(change.pointer);
    }
  }
  std::set<std::string> reported;
  for (const jb::BlockChange& block : diff.blocks) {
    if (block.change == jb::Change::kChanged || block.change == jb::Change::kAdded) {
      reported.emplace(current[static_cast<std::size_t>(block.current)].id);
    } else if (block.change == jb::Change::kRemoved) {
      reported.emplace(previous[static_cast<std::size_t>(block.previous)].id);
    }
  }
  check.unreported = difference(expected, reported);
  check.unexplained = difference(reported, expected);
  return check;
}

}  // namespace kvframe::examples::moba
