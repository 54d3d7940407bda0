#include "jinja_canonical.h"

#include <vector>

namespace kvframe::runtime {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char c : s) {
    const bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

struct Tag {
  char kind;  // '{' expression, '%' statement, '#' comment
  bool strip_before = false;  // "{%-": all whitespace before goes
  bool keep_before = false;   // "{%+": no lstrip_blocks
  bool strip_after = false;   // "-%}": all whitespace after goes
  bool keep_after = false;    // "+%}": no trim_blocks
  std::size_t begin = 0;      // of "{%" in the source
  std::size_t end = 0;        // past "%}"
  std::string_view content;   // between the markers

  bool is_block() const { return kind == '%' || kind == '#'; }
};

// Finds the end of the string literal opening at text[pos]; npos if unterminated.
std::size_t string_end(std::string_view text, std::size_t pos) {
  const char quote = text[pos];
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      return i + 1;
    }
  }
  return std::string_view::npos;
}

// Parses the tag opening at text[open] ("{{", "{%" or "{#").
std::optional<Tag> parse_tag(std::string_view text, std::size_t open) {
  Tag tag;
  tag.kind = text[open + 1];
  tag.begin = open;
  std::size_t i = open + 2;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    (text[i] == '-' ? tag.strip_before : tag.keep_before) = true;
    ++i;
  }
  const char close_first = tag.kind == '{' ? '}' : tag.kind;
  for (std::size_t j = i; j + 1 < text.size(); ++j) {
    if (tag.kind != '#' && (text[j] == '\'' || text[j] == '"')) {
      const std::size_t after = string_end(text, j);
      if (after == std::string_view::npos) return std::nullopt;
      j = after - 1;
      continue;
    }
    if (text[j] != close_first || text[j + 1] != '}') continue;
    std::size_t content_end = j;
    if (content_end > i && (text[content_end - 1] == '-' || text[content_end - 1] == '+')) {
      (text[content_end - 1] == '-' ? tag.strip_after : tag.keep_after) = true;
      --content_end;
    }
    tag.content = text.substr(i, content_end - i);
    tag.end = j + 2;
    return tag;
  }
  return std::nullopt;
}

// What Jinja prints of the text between two tags (either may be absent).
std::string_view printed_text(std::string_view text, std::size_t from, std::size_t to, const Tag* prev,
                              const Tag* next) {
  std::string_view raw = text.substr(from, to - from);
  std::size_t left = 0;
  std::size_t right = raw.size();
  if (prev != nullptr && prev->strip_after) {
    while (left < raw.size() && is_space(raw[left])) ++left;
  } else if (prev != nullptr && prev->is_block() && !prev->keep_after && !raw.empty() && raw[0] == '\n') {
    left = 1;  // trim_blocks
  }
  if (next != nullptr && next->strip_before) {
    while (right > 0 && is_space(raw[right - 1])) --right;
  } else if (next != nullptr && next->is_block() && !next->keep_before) {
    // lstrip_blocks: spaces and tabs between the line start and the tag.
    std::size_t r = raw.size();
    while (r > 0 && (raw[r - 1] == ' ' || raw[r - 1] == '\t')) --r;
    const bool at_line_start = r > 0 ? raw[r - 1] == '\n' : prev == nullptr;
    if (at_line_start) right = r;
  }
  return left < right ? raw.substr(left, right - left) : std::string_view();
}

// Python string-literal escapes Jinja decodes; others stay as written.
void append_decoded(std::string_view literal, std::string& out) {
  for (std::size_t i = 0; i < literal.size(); ++i) {
    if (literal[i] != '\\' || i + 1 == literal.size()) {
      out += literal[i];
      continue;
    }
    const char e = literal[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\':
      case '\'':
      case '"': out += e; break;
      default:
        out += '\\';
        out += e;
    }
  }
}

void append_canonical_content(std::string_view content, std::string& out) {
  for (std::size_t i = 0; i < content.size(); ++i) {
    const char c = content[i];
    if (is_space(c)) continue;
    if (c != '\'' && c != '"') {
      out += c;
      continue;
    }
    const std::size_t after = string_end(content, i);  // parse_tag checked it is terminated
    const std::string_view literal = content.substr(i + 1, after - i - 2);
    std::size_t next = after;
    while (next < content.size() && is_space(content[next])) ++next;
    std::string decoded;
    append_decoded(literal, decoded);
    if (!out.empty() && out.back() == '[' && next < content.size() && content[next] == ']' &&
        is_identifier(decoded)) {
      out.back() = '.';  // message['role'] -> message.role
      out += decoded;
      i = next;
      continue;
    }
    out += kCanonicalQuote;
    out += decoded;
    out += kCanonicalQuote;
    i = after - 1;
  }
}

}  // namespace

std::optional<std::string> canonical_form(std::string_view text) {
  std::vector<Tag> tags;
  for (std::size_t pos = 0;;) {
    std::size_t open = pos;
    while (true) {
      open = text.find('{', open);
      if (open == std::string_view::npos || open + 1 >= text.size()) break;
      const char k = text[open + 1];
      if (k == '{' || k == '%' || k == '#') break;
      ++open;
    }
    if (open == std::string_view::npos || open + 1 >= text.size()) break;
    std::optional<Tag> tag = parse_tag(text, open);
    if (!tag) return std::nullopt;
    pos = tag->end;
    tags.push_back(*tag);
  }

  std::string canonical;
  std::size_t from = 0;
  for (std::size_t t = 0; t <= tags.size(); ++t) {
    const Tag* prev = t > 0 ? &tags[t - 1] : nullptr;
    const Tag* next = t < tags.size() ? &tags[t] : nullptr;
    const std::size_t to = next != nullptr ? next->begin : text.size();
    if (!printed_text(text, from, to, prev, next).empty()) return std::nullopt;
    if (next == nullptr) break;
    from = next->end;
    if (next->kind == '#') continue;
    const bool expression = next->kind == '{';
    canonical += expression ? "{{" : "{%";
    append_canonical_content(next->content, canonical);
    canonical += expression ? "}}" : "%}";
  }
  // 'a' + 'b' is 'ab': join string literals concatenated with +.
  const std::string joint = {kCanonicalQuote, '+', kCanonicalQuote};
  for (std::size_t at = canonical.find(joint); at != std::string::npos; at = canonical.find(joint, at)) {
    canonical.erase(at, joint.size());
  }
  return canonical;
}

}  // namespace kvframe::runtime
