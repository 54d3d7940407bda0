// Summaries of measured samples shared by the benchmarks.
#pragma once

#include <vector>

namespace kvframe::bench {

// The p-th percentile (0..100, nearest rank) of `samples`; NaN when empty.
double percentile(std::vector<double> samples, double p);
// NaN when empty.
double mean(const std::vector<double>& samples);

}  // namespace kvframe::bench
