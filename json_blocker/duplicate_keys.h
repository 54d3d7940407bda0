// Finding a key that appears twice in one object (internal).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace kvframe::json_blocker::detail {

// Index of the first key that repeats an earlier one, if any. `key(i)` gives
// the i-th unescaped key. A 64-bit Bloom filter over a cheap fingerprint clears
// almost every object in one pass; only fingerprint collisions pay a scan.
template <class KeyAt>
std::optional<std::size_t> find_duplicate_key(std::size_t count, KeyAt key) {
  if (count < 2) return std::nullopt;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view k = key(i);
    std::uint64_t head = 0;
    std::memcpy(&head, k.data(), k.size() < 8 ? k.size() : 8);
    const std::uint64_t bit = std::uint64_t{1} << (((head ^ k.size()) * 0x9E3779B97F4A7C15ull) >> 58);
    if (seen & bit) {
      for (std::size_t j = 0; j < i; ++j) {
        if (key(j) == k) return i;
      }
    }
    seen |= bit;
  }
  return std::nullopt;
}

}  // namespace kvframe::json_blocker::detail
