// Structured logging: one logfmt line per event on stderr, e.g.
//   ts=2026-11-22T01:20:03.512Z level=info msg="listening" endpoint=tcp://127.0.0.1:40123
// Values with spaces, quotes or '=' are quoted; tests and tools parse these lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace kvframe::server {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };
const char* log_level_name(LogLevel level);
std::optional<LogLevel> parse_log_level(std::string_view name);

using LogField = std::pair<std::string_view, std::string>;

// Thread-safe: lines from different threads never interleave.
//
// Bounded: a flood of bad messages must not fill the disk, so each message
// text gets at most kLinesPerWindow lines per kWindow; the rest are counted,
// and the count is written as one line ("log lines suppressed", of=<msg>,
// count=N) when the text's next window opens or flush_suppressed() runs (the
// server calls it every few seconds).
class Log {
 public:
  static constexpr int kLinesPerWindow = 20;
  static constexpr std::chrono::seconds kWindow{10};

  explicit Log(LogLevel level = LogLevel::kInfo, std::ostream* out = nullptr);  // nullptr: stderr

  bool enabled(LogLevel level) const { return level <= level_; }
  void write(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void error(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kError, msg, fields); }
  void warn(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kWarn, msg, fields); }
  void info(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kInfo, msg, fields); }
  void debug(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kDebug, msg, fields); }
  // Writes the counts of lines suppressed in windows that have closed (all:
  // in every window, as a server does on its way out).
  void flush_suppressed(bool all = false);

 private:
  struct Window {
    std::chrono::steady_clock::time_point opened;
    int written = 0;
    uint64_t suppressed = 0;
    LogLevel level = LogLevel::kInfo;
  };
  // Whether this line may be written; reports a closed window's count first.
  bool admit(LogLevel level, std::string_view msg, std::chrono::steady_clock::time_point now);  // caller holds mutex_
  void report_suppressed(std::string_view msg, Window& window);                                   // caller holds mutex_

  LogLevel level_;
  std::ostream* out_;
  std::mutex mutex_;
  std::map<std::string, Window, std::less<>> windows_;  // by message text: the literals in the code
};

// A logfmt value: as is when safe, else quoted with \" and \\ escaped.
std::string logfmt_quote(std::string_view value);
// Session ids as 16 hex digits, the same in every log line.
std::string hex_id(uint64_t id);

}  // namespace kvframe::server
