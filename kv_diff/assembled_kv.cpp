#include "kvframe/kv_diff/assembled_kv.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "placement.h"
#include "slot_plan.h"

namespace kvframe::kv_diff {

const char* layout_name(Layout layout) { return layout == Layout::kSlack ? "slack" : "compact"; }

std::optional<Layout> parse_layout(std::string_view name) {
  if (name == "slack") return Layout::kSlack;
  if (name == "compact") return Layout::kCompact;
  return std::nullopt;
}

Result<AssembledKv> AssembledKv::create(const runtime::KvShape& shape, const runtime::Rope& rope,
                                        int64_t capacity, Layout layout, int64_t initial_capacity) {
  if (capacity < 1) return Error{ErrorCode::kInvalidArgument, "an assembled KV buffer needs a capacity of at least 1"};
  const int64_t entries = initial_capacity > 0 ? std::min(initial_capacity, capacity) : capacity;
  try {
    // Zeros, not empty: masked entries still enter attention's probs·V
    // product (with weight 0), and uninitialized memory may hold NaNs.
    const auto options = at::TensorOptions(shape.dtype).device(shape.device);
    at::Tensor k = at::zeros({shape.n_layer, shape.n_head_kv, entries, shape.head_dim}, options);
    at::Tensor v = at::zeros({shape.n_layer, shape.n_head_kv, entries, shape.head_dim}, options);
    return AssembledKv(std::move(k), std::move(v), rope, layout, capacity);
  } catch (const c10::Error& e) {
    return Error{ErrorCode::kBackend, "libtorch failed while allocating a " + std::to_string(entries) +
                                          "-entry assembled KV buffer: " + e.what_without_backtrace() +
                                          " — free memory, or use a smaller capacity"};
  }
}

AssembledKv::AssembledKv(at::Tensor k, at::Tensor v, runtime::Rope rope, Layout layout, int64_t max_capacity)
    : k_(std::move(k)), v_(std::move(v)), rope_(std::move(rope)), layout_(layout), max_capacity_(max_capacity) {
  bind_cache();
}

void AssembledKv::bind_cache() {
  cache_.k.clear();
  cache_.v.clear();
  for (int64_t l = 0; l < k_.size(0); ++l) {
    cache_.k.push_back(k_[l]);
    cache_.v.push_back(v_[l]);
  }
  cache_.capacity = k_.size(2);
  padding_ = at::zeros({cache_.capacity}, at::TensorOptions(at::kBool).device(k_.device()));
  cache_.padding = at::Tensor();
}

Status AssembledKv::reserve(int64_t entries) {
  if (entries <= cache_.capacity) return {};
  if (entries > max_capacity_) {
    return Error{ErrorCode::kContextFull, "the assembled KV buffer may hold " + std::to_string(max_capacity_) +
                                              " entries; " + std::to_string(entries) + " were asked for"};
  }
  const int64_t grown = std::min(max_capacity_, std::max(entries, 2 * cache_.capacity));
  try {
    at::Tensor k = at::zeros({k_.size(0), k_.size(1), grown, k_.size(3)}, k_.options());
    at::Tensor v = at::zeros({v_.size(0), v_.size(1), grown, v_.size(3)}, v_.options());
    k.narrow(2, 0, k_.size(2)).copy_(k_);
    v.narrow(2, 0, v_.size(2)).copy_(v_);
    k_ = std::move(k);
    v_ = std::move(v);
  } catch (const c10::Error& e) {
    return Error{ErrorCode::kBackend, "libtorch failed while growing the assembled KV buffer to " +
                                          std::to_string(grown) + " entries: " + e.what_without_backtrace()};
  }
  bind_cache();
  set_padding();
  return {};
}

void AssembledKv::reset() {
  cache_.length = 0;
  cache_.next_position = 0;
  seal_prefix();
}

void AssembledKv::seal_prefix() {
  prefix_length_ = cache_.length;
  prefix_position_ = cache_.next_position;
  high_water_ = prefix_length_;
  blocks_.clear();
  free_.clear();
  set_padding();
}

int64_t AssembledKv::tokens() const {
  int64_t n = 0;
  for (const Slotted& b : blocks_) n += b.kv->kv.tokens();
  return n;
}

void AssembledKv::truncate_to_assembly() {
  cache_.length = high_water_;
  cache_.next_position = prefix_position_ + tokens();
}

std::vector<SlotInfo> AssembledKv::slots() const {
  std::vector<SlotInfo> out;
  for (const Slotted& b : blocks_) out.push_back({b.id, b.slot.offset, b.slot.size, b.position, b.kv->kv.tokens()});
  return out;
}

at::Tensor AssembledKv::entry_positions() const {
  std::vector<int64_t> positions(static_cast<size_t>(cache_.length), std::numeric_limits<int64_t>::max());
  auto position_of = [&](int64_t entry) -> int64_t& { return positions[static_cast<size_t>(entry)]; };
  for (int64_t e = 0; e < prefix_length_; ++e) position_of(e) = prefix_position_ - prefix_length_ + e;
  for (const Slotted& b : blocks_) {
    for (int64_t t = 0; t < b.kv->kv.tokens(); ++t) position_of(b.slot.offset + t) = b.position + t;
  }
  const int64_t assembled_end = prefix_position_ + tokens();
  for (int64_t e = high_water_; e < cache_.length; ++e) position_of(e) = assembled_end + e - high_water_;
  return at::tensor(positions, at::kLong).to(k_.device());
}

void AssembledKv::set_padding() {
  // No gaps (the compact layout; slack slots keep spare entries): no padding,
  // which keeps attention on its unmasked (on CUDA, fused) paths.
  if (prefix_length_ + tokens() == high_water_) {
    cache_.padding = at::Tensor();
    return;
  }
  // Built in plain host memory (one byte per entry: hundreds of blocks would
  // be hundreds of tensor ops) and copied over in one go.
  std::vector<uint8_t> mask(static_cast<size_t>(cache_.capacity), 0);
  std::fill(mask.begin() + prefix_length_, mask.begin() + high_water_, 1);
  for (const Slotted& b : blocks_) std::fill_n(mask.begin() + b.slot.offset, b.kv->kv.tokens(), 0);
  padding_.copy_(at::from_blob(mask.data(), {cache_.capacity}, at::kBool));
  cache_.padding = padding_;
}

Status AssembledKv::check_blocks(const std::vector<PlacedBlock>& blocks) const {
  std::unordered_set<uint64_t> ids;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string which = "block " + std::to_string(i) + " (id " + std::to_string(blocks[i].id) + ")";
    if (!ids.insert(blocks[i].id).second) {
      return Error{ErrorCode::kInvalidArgument, which + " repeats an id: a frame's block ids must be distinct"};
    }
    const BlockRef& b = blocks[i].kv;
    const bool shaped = b && b->kv.k.defined() && b->kv.v.defined() && b->kv.k.dim() == 4 &&
                        b->kv.k.sizes() == b->kv.v.sizes() && b->kv.k.size(0) == k_.size(0) &&
                        b->kv.k.size(1) == k_.size(1) && b->kv.k.size(3) == k_.size(3) && b->kv.tokens() > 0;
    if (!shaped) {
      return Error{ErrorCode::kInvalidArgument,
                   which + " is missing, empty, or not shaped [n_layer, n_head_kv, n, head_dim] = [" +
                       std::to_string(k_.size(0)) + ", " + std::to_string(k_.size(1)) + ", n, " +
                       std::to_string(k_.size(3)) + "] as this buffer's model"};
    }
  }
  return {};
}

Result<AssembleStats> AssembledKv::assemble(const std::vector<PlacedBlock>& blocks) {
  const auto start = std::chrono::steady_clock::now();
  if (auto checked = check_blocks(blocks); !checked.ok()) return checked.error();
  std::vector<int64_t> lengths;
  int64_t total = 0;
  for (const PlacedBlock& b : blocks) {
    lengths.push_back(b.kv->kv.tokens());
    total += lengths.back();
  }
  // Room for the frame, and for the slack layout's spare entries (it
  // compacts at 1.5x fragmentation), as far as the buffer may grow.
  const int64_t wanted = prefix_length_ + (layout_ == Layout::kSlack ? total + total / 2 : total);
  if (auto status = reserve(std::min(wanted, max_capacity_)); !status.ok()) return status.error();
  if (prefix_length_ + total > cache_.capacity) {
    return Error{ErrorCode::kContextFull,
                 "the assembled KV buffer holds " + std::to_string(cache_.capacity) + " entries; the prefix takes " +
                     std::to_string(prefix_length_) + " and this frame's " + std::to_string(blocks.size()) +
                     " blocks " + std::to_string(total) +
                     " — create it with a larger capacity (prefix + blocks + query + reply, and ~25% slack for "
                     "the slack layout) or send fewer blocks"};
  }

  std::unordered_map<uint64_t, const Slotted*> before;
  for (const Slotted& b : blocks_) before.emplace(b.id, &b);
  SlotPlan plan;
  if (layout_ == Layout::kCompact) {
    plan = pack_slots(lengths, prefix_length_, cache_.capacity, false);
  } else {
    std::vector<std::optional<EntryRange>> previous;
    std::unordered_set<uint64_t> staying;
    for (const PlacedBlock& b : blocks) {
      auto it = before.find(b.id);
      previous.push_back(it == before.end() ? std::nullopt : std::optional<EntryRange>(it->second->slot));
      staying.insert(b.id);
    }
    std::vector<EntryRange> free = free_;
    for (const Slotted& b : blocks_) {
      if (!staying.count(b.id)) free.push_back(b.slot);
    }
    plan = plan_slack(lengths, previous, std::move(free), prefix_length_, high_water_, cache_.capacity);
  }

  // What each block needs, from where it was last frame. Every write reads
  // the stored base, never the buffer, so the order of writes is free.
  AssembleStats stats;
  stats.blocks = static_cast<int64_t>(blocks.size());
  stats.compacted = plan.compacted;
  const int64_t token_bytes = k_.size(0) * k_.size(1) * k_.size(3) * static_cast<int64_t>(k_.element_size());
  std::vector<Placement> placements;
  std::vector<Slotted> placed;
  int64_t position = prefix_position_;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const PlacedBlock& b = blocks[i];
    const EntryRange slot = plan.slots[i];
    const int64_t n = lengths[i];
    auto it = before.find(b.id);
    const bool same_entries = it != before.end() && it->second->slot.offset == slot.offset && it->second->kv->key == b.kv->key;
    if (same_entries && it->second->position == position) {
      ++stats.blocks_kept;
    } else if (same_entries) {
      placements.push_back({&b.kv->kv, slot.offset, position, false});
      ++stats.blocks_rotated;
      stats.tokens_rotated += n;
      stats.bytes_written += n * token_bytes;
    } else {
      placements.push_back({&b.kv->kv, slot.offset, position, true});
      ++stats.blocks_written;
      stats.tokens_written += n;
      stats.bytes_written += 2 * n * token_bytes;
    }
    placed.push_back({b.id, b.kv, slot, position});
    position += n;
  }

  if (auto status = place(placements); !status.ok()) return status.error();
  blocks_ = std::move(placed);
  free_ = std::move(plan.free);
  high_water_ = plan.end;
  truncate_to_assembly();
  set_padding();
  stats.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

Status AssembledKv::restore(size_t first) {
  std::vector<Placement> placements;
  for (size_t i = first; i < blocks_.size(); ++i) {
    placements.push_back({&blocks_[i].kv->kv, blocks_[i].slot.offset, blocks_[i].position, true});
  }
  const int64_t length = cache_.length, next_position = cache_.next_position;
  if (Status placed = place(placements); !placed.ok()) return placed;
  cache_.length = length;
  cache_.next_position = next_position;
  return {};
}

Status AssembledKv::place(const std::vector<Placement>& placements) {
  try {
    apply_placements(placements, {k_, v_, &rope_});
    return {};
  } catch (const std::exception& e) {  // c10::Error, or a CUDA launch failure
    cache_.length = prefix_length_;
    cache_.next_position = prefix_position_;
    seal_prefix();  // the buffer's blocks are now unknown: forget them all
    return Error{ErrorCode::kBackend, std::string("placing blocks in the assembled KV buffer failed: ") + e.what()};
  }
}

}  // namespace kvframe::kv_diff
