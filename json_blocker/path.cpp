#include "path.h"

#include <charconv>

#include "kvframe/common/json_pointer.h"

namespace kvframe::json_blocker::detail {

bool is_plain_key(std::string_view key) {
  if (key.empty()) return false;
  for (unsigned char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c >= 0x80;
    if (!ok) return false;
  }
  return true;
}

void append_quoted(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

void append_id_key(std::string& out, std::string_view key, bool at_root) {
  if (is_plain_key(key)) {
    if (!at_root) out.push_back('.');
    out += key;
  } else {
    out.push_back('[');
    append_quoted(out, key);
    out.push_back(']');
  }
}

void append_id_element(std::string& out, const Segment& element) {
  out.push_back('[');
  if (element.key_field.empty()) {
    char digits[24];
    auto r = std::to_chars(digits, digits + sizeof digits, element.index);
    out.append(digits, r.ptr);
  } else {
    out += element.key_field;
    out.push_back('=');
    const std::string_view v = element.key_value;
    if (is_plain_key(v)) {
      out += v;
    } else {
      append_quoted(out, v);
    }
  }
  out.push_back(']');
}

void append_pointer_key(std::string& out, std::string_view key) {
  out.push_back('/');
  common::append_json_pointer_token(out, key);
}

void append_pointer_index(std::string& out, std::size_t index) {
  char digits[24];
  auto r = std::to_chars(digits, digits + sizeof digits, index);
  out.push_back('/');
  out.append(digits, r.ptr);
}

namespace {

// '*' inside a key segment matches any run of characters. Hand-written because
// fnmatch() gives '[' a meaning that clashes with our element syntax.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Error pattern_error(std::string_view text, std::size_t at, const std::string& what) {
  return Error{ErrorCode::kInvalidRules, at,
               "path pattern \"" + std::string(text) + "\": " + what +
                   " (patterns look like state.chips.p2, units[*].debug, **.timestamp)"};
}

// Reads a JSON-quoted string starting at text[i] == '"'; returns its unescaped
// value and moves i past the closing quote. Only the escapes append_quoted writes.
bool read_quoted(std::string_view text, std::size_t& i, std::string& out) {
  ++i;
  while (i < text.size() && text[i] != '"') {
    if (text[i] == '\\' && i + 1 < text.size()) {
      ++i;
      if (text[i] == 'u' && i + 4 < text.size()) {
        unsigned v = 0;
        auto r = std::from_chars(text.data() + i + 1, text.data() + i + 5, v, 16);
        if (r.ec != std::errc() || v >= 0x80) return false;
        out.push_back(static_cast<char>(v));
        i += 5;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  if (i >= text.size()) return false;
  ++i;
  return true;
}

}  // namespace

Result<Pattern> Pattern::parse(std::string_view text) {
  Pattern pattern;
  std::size_t i = 0;
  if (text.empty()) return pattern_error(text, 0, "empty pattern");
  while (i < text.size()) {
    Part part{Kind::kKeyGlob, {}, {}, 0};
    if (text[i] == '.') {
      if (i == 0 || i + 1 >= text.size()) return pattern_error(text, i, "stray '.'");
      ++i;
    }
    if (text[i] == '[') {
      std::size_t close;
      if (i + 1 < text.size() && text[i + 1] == '"') {
        std::size_t j = i + 1;
        if (!read_quoted(text, j, part.a) || j >= text.size() || text[j] != ']')
          return pattern_error(text, i, "unterminated quoted key");
        part.kind = Kind::kKeyGlob;
        close = j;
      } else {
        close = text.find(']', i);
        if (close == std::string_view::npos) return pattern_error(text, i, "missing ']'");
        std::string_view inside = text.substr(i + 1, close - i - 1);
        std::size_t eq = inside.find('=');
        if (inside == "*") {
          part.kind = Kind::kAnyElement;
        } else if (eq != std::string_view::npos) {
          part.kind = Kind::kKeyed;
          part.a = std::string(inside.substr(0, eq));
          std::string_view value = inside.substr(eq + 1);
          if (!value.empty() && value.front() == '"') {
            std::size_t j = 0;
            if (!read_quoted(value, j, part.b) || j != value.size())
              return pattern_error(text, i, "bad quoted key value");
          } else {
            part.b = std::string(value);
          }
          if (part.a.empty()) return pattern_error(text, i, "missing key field before '='");
        } else {
          part.kind = Kind::kIndex;
          auto r = std::from_chars(inside.data(), inside.data() + inside.size(), part.index);
          if (inside.empty() || r.ec != std::errc() || r.ptr != inside.data() + inside.size())
            return pattern_error(text, i, "expected [*], [N] or [field=value]");
        }
      }
      i = close + 1;
    } else {
      std::size_t end = i;
      while (end < text.size() && text[end] != '.' && text[end] != '[') ++end;
      std::string_view word = text.substr(i, end - i);
      if (word.empty()) return pattern_error(text, i, "empty segment");
      if (word == "**") {
        part.kind = Kind::kAnyMany;
      } else if (word == "*") {
        part.kind = Kind::kAnyOne;
      } else {
        part.a = std::string(word);
      }
      i = end;
    }
    if (part.kind == Kind::kAnyMany) pattern.any_many_ |= std::uint64_t{1} << pattern.parts_.size();
    pattern.parts_.push_back(std::move(part));
    if (pattern.parts_.size() > kMaxSegments)
      return pattern_error(text, i, "more than 63 segments");
  }
  return pattern;
}

bool Pattern::matches(const Part& part, const Segment& s) const {
  switch (part.kind) {
    case Kind::kKeyGlob: return !s.is_element && glob_match(part.a, s.key);
    case Kind::kAnyOne: return true;
    case Kind::kAnyMany: return true;
    case Kind::kAnyElement: return s.is_element;
    case Kind::kIndex: return s.is_element && s.index == part.index;
    case Kind::kKeyed: return s.is_element && s.key_field == part.a && s.key_value == part.b;
  }
  return false;
}

// Both loops visit only the set bits: most states hold one or two positions.
std::uint64_t Pattern::closure(std::uint64_t state) const {
  for (std::uint64_t pending = state & any_many_; pending != 0; pending &= pending - 1) {
    const std::uint64_t next = (pending & -pending) << 1;  // '**' may match nothing
    if (!(state & next)) {
      state |= next;
      pending |= next & any_many_;
    }
  }
  return state;
}

std::uint64_t Pattern::start() const { return closure(1); }

std::uint64_t Pattern::step(std::uint64_t state, const Segment& segment) const {
  std::uint64_t next = 0;
  for (std::uint64_t bits = state & ((std::uint64_t{1} << parts_.size()) - 1); bits != 0;
       bits &= bits - 1) {
    const auto i = static_cast<std::size_t>(__builtin_ctzll(bits));
    const Part& part = parts_[i];
    if (matches(part, segment)) next |= std::uint64_t{1} << (part.kind == Kind::kAnyMany ? i : i + 1);
  }
  return closure(next);
}

}  // namespace kvframe::json_blocker::detail
