// DeterministicRng: the same seed gives the same numbers on every platform.
//
// std::mt19937_64's raw output is fixed by the standard, but the std::*
// distributions are implementation-defined (libstdc++ and libc++ draw
// differently), so sample data built on them would differ between machines.
// These few helpers map raw engine output to ranges themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace kvframe::examples {

class DeterministicRng {
 public:
  explicit DeterministicRng(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, n), n > 0. Rejection keeps it unbiased: values in the
  // incomplete last block of size n are redrawn.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return x % n;
  }

  // Uniform integer in [lo, hi], lo <= hi.
  int between(int lo, int hi) {
    return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }

  // Uniform in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  bool chance(double p) { return unit() < p; }

  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(below(items.size()))];
  }

  // Fisher-Yates with our own index draws (std::shuffle is implementation-defined).
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i) {
      std::swap(items[i - 1], items[static_cast<std::size_t>(below(i))]);
    }
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kvframe::examples
