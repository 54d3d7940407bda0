#include "slot_plan.h"

#include <algorithm>

namespace kvframe::kv_diff {

int64_t slot_slack(int64_t n) { return std::max(kMinSlack, n / 4); }

SlotPlan pack_slots(const std::vector<int64_t>& lengths, int64_t begin, int64_t capacity, bool slack) {
  int64_t with_slack = 0;
  for (int64_t n : lengths) with_slack += n + slot_slack(n);
  const bool spare = slack && begin + with_slack <= capacity;
  SlotPlan plan;
  plan.end = begin;
  for (int64_t n : lengths) {
    const int64_t size = n + (spare ? slot_slack(n) : 0);
    plan.slots.push_back({plan.end, size});
    plan.end += size;
  }
  return plan;
}

namespace {

// Sorts and merges the holes; holes at the end of the used region are no
// holes: the region shrinks instead.
void normalize(std::vector<EntryRange>& free, int64_t& end) {
  std::sort(free.begin(), free.end(), [](const EntryRange& a, const EntryRange& b) { return a.offset < b.offset; });
  std::vector<EntryRange> merged;
  for (const EntryRange& r : free) {
    if (!merged.empty() && merged.back().end() == r.offset) {
      merged.back().size += r.size;
    } else {
      merged.push_back(r);
    }
  }
  while (!merged.empty() && merged.back().end() == end) {
    end = merged.back().offset;
    merged.pop_back();
  }
  free = std::move(merged);
}

// A slot for n tokens: the first hole that fits, else the end of the used
// region; slack as far as the space allows.
std::optional<EntryRange> allocate(int64_t n, std::vector<EntryRange>& free, int64_t& end, int64_t capacity) {
  const int64_t want = n + slot_slack(n);
  for (auto hole = free.begin(); hole != free.end(); ++hole) {
    if (hole->size < n) continue;
    const EntryRange slot{hole->offset, std::min(hole->size, want)};
    hole->offset += slot.size;
    hole->size -= slot.size;
    if (hole->size == 0) free.erase(hole);
    return slot;
  }
  if (end + n > capacity) return std::nullopt;
  const EntryRange slot{end, std::min(want, capacity - end)};
  end += slot.size;
  return slot;
}

}  // namespace

SlotPlan plan_slack(const std::vector<int64_t>& lengths, const std::vector<std::optional<EntryRange>>& previous,
                    std::vector<EntryRange> free, int64_t begin, int64_t end, int64_t capacity) {
  SlotPlan plan;
  plan.slots.resize(lengths.size());
  std::vector<size_t> homeless;
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (previous[i] && lengths[i] <= previous[i]->size) {
      plan.slots[i] = *previous[i];
      continue;
    }
    if (previous[i]) free.push_back(*previous[i]);  // outgrown
    homeless.push_back(i);
  }
  normalize(free, end);

  int64_t fresh = 0;  // what pack_slots(slack) would span
  for (int64_t n : lengths) fresh += n + slot_slack(n);
  bool fits = true;
  for (size_t i : homeless) {
    auto slot = allocate(lengths[i], free, end, capacity);
    if (!slot) {
      fits = false;
      break;
    }
    plan.slots[i] = *slot;
  }
  if (!fits || static_cast<double>(end - begin) > kMaxSpread * static_cast<double>(fresh)) {
    SlotPlan packed = pack_slots(lengths, begin, capacity, true);
    packed.compacted = true;
    return packed;
  }
  plan.free = std::move(free);
  plan.end = end;
  return plan;
}

}  // namespace kvframe::kv_diff
