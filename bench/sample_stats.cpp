#include "sample_stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace kvframe::bench {

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return std::nan("");
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
  return samples[std::clamp<std::size_t>(rank, 1, samples.size()) - 1];
}

double mean(const std::vector<double>& samples) {
  if (samples.empty()) return std::nan("");
  double sum = 0;
  for (double x : samples) sum += x;
  return sum / static_cast<double>(samples.size());
}

}  // namespace kvframe::bench
