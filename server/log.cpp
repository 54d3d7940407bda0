#include "kvframe/server_core/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace kvframe::server {

namespace {

// UTC with milliseconds, as ISO 8601 ("2026-11-22T01:20:03.512Z").
std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + n, sizeof text - n, ".%03dZ", static_cast<int>(ms));
  return text;
}

std::string format_line(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  // msg is always quoted, so parsers find it the same way on every line.
  std::string line = "ts=" + timestamp() + " level=" + log_level_name(level) + " msg=\"";
  for (char c : msg) line += (c == '"' ? '\'' : c);
  line += '"';
  for (const auto& [key, value] : fields) {
    line += ' ';
    line += key;
    line += '=';
    line += logfmt_quote(value);
  }
  line += '\n';
  return line;
}

}  // namespace

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError: return "error";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kInfo: return "info";
    case LogLevel::kDebug: return "debug";
  }
  return "info";
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  for (LogLevel level : {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug}) {
    if (name == log_level_name(level)) return level;
  }
  return std::nullopt;
}

std::string logfmt_quote(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) plain = false;
  }
  if (plain) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';  // other control characters would break the one-line format
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string hex_id(uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
  return text;
}

Log::Log(LogLevel level, std::ostream* out) : level_(level), out_(out ? out : &std::cerr) {}

void Log::report_suppressed(std::string_view msg, Window& window) {
  if (window.suppressed == 0) return;
  *out_ << format_line(window.level, "log lines suppressed",
                       {{"of", std::string(msg)},
                        {"count", std::to_string(window.suppressed)},
                        {"window_s", std::to_string(kWindow.count())}})
        << std::flush;
  window.suppressed = 0;
}

bool Log::admit(LogLevel level, std::string_view msg, std::chrono::steady_clock::time_point now) {
  auto it = windows_.find(msg);
  if (it == windows_.end()) it = windows_.emplace(std::string(msg), Window{now, 0, 0, level}).first;
  Window& window = it->second;
  if (now - window.opened >= kWindow) {
    report_suppressed(msg, window);
    window.opened = now;
    window.written = 0;
  }
  if (window.written < kLinesPerWindow) {
    ++window.written;
    return true;
  }
  ++window.suppressed;
  window.level = level;
  return false;
}

void Log::write(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!enabled(level)) return;
  std::string line = format_line(level, msg, fields);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!admit(level, msg, std::chrono::steady_clock::now())) return;
  *out_ << line << std::flush;
}

void Log::flush_suppressed(bool all) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [msg, window] : windows_) {
    if (all || now - window.opened >= kWindow) report_suppressed(msg, window);
  }
}

}  // namespace kvframe::server
