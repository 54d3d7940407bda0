// Google Benchmark's console table, plus a summary printed after it: per
// workload, frame MB/s, µs per frame and throughput relative to a reference
// benchmark (the bare DOM parse), all from the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace kvframe::bench {

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  using ConsoleReporter::ConsoleReporter;

  void ReportRuns(const std::vector<Run>& runs) override;

  // Benchmarks are named "<workload>/<benchmark>"; `reference` is the
  // <benchmark> the ratio column divides by.
  void print_summary(std::ostream& out, const std::string& reference) const;

 private:
  struct Result {
    double bytes_per_second = 0;
    double us_per_frame = 0;
    bool from_median = false;
  };
  std::vector<std::string> order_;  // names in the order they ran
  std::map<std::string, Result> results_;
};

}  // namespace kvframe::bench
