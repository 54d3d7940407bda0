// Structured logging: one logfmt line per event on stderr, e.g.
//   ts=2026-11-22T01:20:03.512Z level=info msg="listening" endpoint=tcp://127.0.0.1:40123
// Values with spaces, quotes or '=' are quoted; tests and tools parse these lines.
#pragma once

#include <cstdint>
#include <initializer_list>
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
class Log {
 public:
  explicit Log(LogLevel level = LogLevel::kInfo, std::ostream* out = nullptr);  // nullptr: stderr

  bool enabled(LogLevel level) const { return level <= level_; }
  void write(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void error(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kError, msg, fields); }
  void warn(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kWarn, msg, fields); }
  void info(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kInfo, msg, fields); }
  void debug(std::string_view msg, std::initializer_list<LogField> fields = {}) { write(LogLevel::kDebug, msg, fields); }

 private:
  LogLevel level_;
  std::ostream* out_;
  std::mutex mutex_;
};

// A logfmt value: as is when safe, else quoted with \" and \\ escaped.
std::string logfmt_quote(std::string_view value);
// Session ids as 16 hex digits, the same in every log line.
std::string hex_id(uint64_t id);

}  // namespace kvframe::server
