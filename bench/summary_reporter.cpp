#include "summary_reporter.h"

#include <cstdio>

namespace kvframe::bench {

namespace {

double microseconds(double time, benchmark::TimeUnit unit) {
  switch (unit) {
    case benchmark::kNanosecond: return time / 1e3;
    case benchmark::kMicrosecond: return time;
    case benchmark::kMillisecond: return time * 1e3;
    case benchmark::kSecond: return time * 1e6;
  }
  return time;
}

std::string format(const char* pattern, double value) {
  char text[32];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

}  // namespace

void SummaryReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.error_occurred) continue;
    // With --benchmark_repetitions the median stands for the name; without,
    // the single run does.
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    if (run.run_type == Run::RT_Aggregate && !median) continue;
    const std::string& name = run.run_name.function_name;
    auto [it, inserted] = results_.try_emplace(name);
    if (inserted) order_.push_back(name);
    Result& result = it->second;
    if (!inserted && (result.from_median || !median)) continue;
    const auto rate = run.counters.find("bytes_per_second");
    result.bytes_per_second = rate == run.counters.end() ? 0 : double(rate->second);
    result.us_per_frame = microseconds(run.GetAdjustedRealTime(), run.time_unit);
    result.from_median = median;
  }
}

void SummaryReporter::print_summary(std::ostream& out, const std::string& reference) const {
  out << "\nSummary (MB/s = frame bytes per second, 1 MB = 10^6 bytes; 'vs " << reference
      << "' = throughput / that of " << reference << " on the same workload, this run)\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-36s %10s %12s %14s\n", "benchmark", "MB/s", "us/frame",
                ("vs " + reference).c_str());
  out << line;
  for (const std::string& name : order_) {
    const Result& result = results_.at(name);
    const std::string workload = name.substr(0, name.find('/'));
    const auto base = results_.find(workload + "/" + reference);
    const std::string ratio =
        base != results_.end() && base->second.bytes_per_second > 0 && result.bytes_per_second > 0
            ? format("%.2fx", result.bytes_per_second / base->second.bytes_per_second)
            : "-";
    std::snprintf(
        line, sizeof line, "%-36s %10s %12s %14s\n", name.c_str(),
        result.bytes_per_second > 0 ? format("%.1f", result.bytes_per_second / 1e6).c_str() : "-",
        format("%.1f", result.us_per_frame).c_str(), ratio.c_str());
    out << line;
  }
}

}  // namespace kvframe::bench
