// Wall time since a steady_clock point, for the decode and mask timings that
// GenerateStats reports.
#pragma once

#include <chrono>

namespace kvframe::runtime {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kvframe::runtime
