#include "pattern_parser.h"

#include <algorithm>
#include <string>
#include <utility>

namespace kvframe::runtime::schema {
namespace {

constexpr const char* kSubset =
    "supported: characters and escapes, ., [...] and [^...], \\d \\w \\s \\D \\W \\S, (...) (?:...), |, "
    "* + ? {m} {m,} {m,n}, ^ $";

// Thrown inside the parser only; parse_pattern turns it into a SchemaError.
struct PatternFailure {
  ErrorCode code;
  std::string message;
};

using Ranges = std::vector<CodePointRange>;

constexpr uint32_t kNoChar = 0xFFFFFFFF;  // past the end of the pattern

Ranges normalized(Ranges r) {
  std::sort(r.begin(), r.end(), [](const CodePointRange& a, const CodePointRange& b) { return a.lo < b.lo; });
  Ranges out;
  for (const CodePointRange& x : r) {
    if (!out.empty() && x.lo <= out.back().hi + 1) {
      out.back().hi = std::max(out.back().hi, x.hi);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

Ranges complement(const Ranges& r) {  // r normalized
  Ranges out;
  uint32_t next = 0;
  for (const CodePointRange& x : r) {
    if (x.lo > next) out.push_back({next, x.lo - 1});
    next = x.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

// ECMA-262's sets: \d and \w are ASCII; \s is WhiteSpace and LineTerminator.
const Ranges kDigits = {{'0', '9'}};
const Ranges kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace = {{0x09, 0x0D}, {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
                       {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const Ranges kLineTerminators = {{0x0A, 0x0A}, {0x0D, 0x0D}, {0x2028, 0x2029}};

int hex_digit(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
  return -1;
}

bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
bool is_ascii_alnum(uint32_t c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

PatternNode chars(Ranges ranges) {
  PatternNode node;
  node.kind = PatternNode::Kind::kChars;
  node.ranges = normalized(std::move(ranges));
  return node;
}

// A class escape (\d) or one character.
struct ClassAtom {
  Ranges set;
  bool is_set = false;
  uint32_t cp = 0;
};

class Parser {
 public:
  explicit Parser(std::vector<uint32_t> text) : text_(std::move(text)) {}

  PatternNode whole() {
    PatternNode node = alternation(0);
    if (!done()) invalid("unbalanced parenthesis: the ')'" + where(at_) + " closes no group");
    return node;
  }

 private:
  bool done() const { return at_ >= text_.size(); }
  uint32_t peek(size_t ahead = 0) const { return at_ + ahead < text_.size() ? text_[at_ + ahead] : kNoChar; }
  static std::string where(size_t at) { return " at character " + std::to_string(at); }

  [[noreturn]] static void invalid(std::string message) {
    throw PatternFailure{ErrorCode::kSchemaInvalid, std::move(message)};
  }
  [[noreturn]] static void unsupported(const std::string& what, size_t at) {
    throw PatternFailure{ErrorCode::kSchemaUnsupported, what + where(at) + " is not supported (" + kSubset + ")"};
  }

  PatternNode alternation(int depth) {
    std::vector<PatternNode> branches;
    branches.push_back(sequence(depth));
    while (peek() == '|') {
      ++at_;
      branches.push_back(sequence(depth));
    }
    if (branches.size() == 1) return std::move(branches.front());
    PatternNode node;
    node.kind = PatternNode::Kind::kAlternation;
    node.children = std::move(branches);
    return node;
  }

  PatternNode sequence(int depth) {
    PatternNode node;
    node.kind = PatternNode::Kind::kSequence;
    while (!done() && peek() != '|' && peek() != ')') {
      const bool anchor = peek() == '^' || peek() == '$';  // (^)? is fine: a group may repeat
      PatternNode item = atom(depth);
      quantify(item, anchor);
      node.children.push_back(std::move(item));
    }
    if (node.children.empty()) return PatternNode{};
    if (node.children.size() == 1) return std::move(node.children.front());
    return node;
  }

  static bool starts_quantifier(uint32_t c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

  void quantify(PatternNode& item, bool anchor) {
    if (!starts_quantifier(peek())) return;
    const size_t at = at_;
    int64_t min = 0, max = kUnbounded;
    switch (text_[at_++]) {
      case '*': break;
      case '+': min = 1; break;
      case '?': max = 1; break;
      default: braces(at, min, max);
    }
    if (anchor) invalid("nothing to repeat: the quantifier" + where(at) + " follows an anchor");
    if (peek() == '?') ++at_;  // lazy: the same strings match
    if (starts_quantifier(peek())) invalid("nothing to repeat: a second quantifier" + where(at_));
    PatternNode repeat;
    repeat.kind = PatternNode::Kind::kRepeat;
    repeat.min = min;
    repeat.max = max;
    repeat.children.push_back(std::move(item));
    item = std::move(repeat);
  }

  // {m} {m,} {m,n}, the '{' at `open` already read.
  void braces(size_t open, int64_t& min, int64_t& max) {
    const auto lone_brace = [&] {
      invalid("the '{'" + where(open) + " does not begin a quantifier {m}, {m,} or {m,n}: write \\{ for the character");
    };
    if (!is_digit(peek())) lone_brace();
    min = number();
    max = min;
    if (peek() == ',') {
      ++at_;
      max = is_digit(peek()) ? number() : kUnbounded;
    }
    if (peek() != '}') lone_brace();
    ++at_;
    if (max != kUnbounded && max < min) invalid("the quantifier" + where(open) + " has its minimum above its maximum");
    if (min > kMaxPatternRepeat || max > kMaxPatternRepeat) {
      throw PatternFailure{ErrorCode::kSchemaTooComplex, "the quantifier" + where(open) + " counts past " +
                                                             std::to_string(kMaxPatternRepeat)};
    }
  }

  int64_t number() {
    int64_t n = 0;
    while (is_digit(peek())) n = std::min<int64_t>(n * 10 + (text_[at_++] - '0'), kMaxPatternRepeat + 1);
    return n;
  }

  PatternNode atom(int depth) {
    const size_t at = at_;
    const uint32_t c = text_[at_++];
    PatternNode node;
    switch (c) {
      case '^': node.kind = PatternNode::Kind::kStart; return node;
      case '$': node.kind = PatternNode::Kind::kEnd; return node;
      case '.': return chars(complement(kLineTerminators));
      case '(': return group(at, depth);
      case '[': return char_class(at);
      case '\\': {
        const ClassAtom e = escape(at, false);
        return chars(e.is_set ? e.set : Ranges{{e.cp, e.cp}});
      }
      case '*':
      case '+':
      case '?':
      case '{':
        invalid("nothing to repeat: the '" + std::string(1, static_cast<char>(c)) + "'" + where(at) +
                " follows no character or group (write \\" + std::string(1, static_cast<char>(c)) +
                " for the character)");
      case '}':
      case ']':
        invalid("a lone '" + std::string(1, static_cast<char>(c)) + "'" + where(at) + ": write \\" +
                std::string(1, static_cast<char>(c)) + " for the character");
      default:
        return chars({{c, c}});
    }
  }

  PatternNode group(size_t open, int depth) {
    if (depth + 1 > kMaxPatternNesting) {
      throw PatternFailure{ErrorCode::kSchemaTooComplex,
                           "groups nested deeper than " + std::to_string(kMaxPatternNesting) + where(open)};
    }
    if (peek() == '?') {
      const uint32_t kind = peek(1);
      if (kind == '=' || kind == '!') unsupported(kind == '=' ? "lookahead (?=" : "negative lookahead (?!", open);
      if (kind == '<' && (peek(2) == '=' || peek(2) == '!')) unsupported("lookbehind (?<= / (?<!", open);
      if (kind == ':') {
        at_ += 2;
      } else if (kind == '<') {  // a named group: the name does not change what matches
        at_ += 2;
        const size_t name = at_;
        while (is_ascii_alnum(peek()) || peek() == '_' || peek() == '$') ++at_;
        if (at_ == name || peek() != '>') invalid("the group name" + where(open) + " must be a name closed by '>'");
        ++at_;
      } else {
        unsupported("the group modifier (?" + std::string(kind < 0x80 ? 1 : 0, static_cast<char>(kind)) +
                        " (inline flags and other extensions)",
                    open);
      }
    }
    PatternNode node = alternation(depth + 1);
    if (peek() != ')') invalid("unbalanced parenthesis: the '('" + where(open) + " is never closed");
    ++at_;
    return node;
  }

  PatternNode char_class(size_t open) {
    const bool negated = peek() == '^';
    if (negated) ++at_;
    Ranges set;
    while (true) {
      if (done()) invalid("the '['" + where(open) + " is never closed");
      if (peek() == ']') {
        ++at_;
        break;
      }
      const size_t at = at_;
      const ClassAtom first = class_atom();
      if (peek() != '-' || peek(1) == ']' || peek(1) == kNoChar) {
        if (first.is_set) {
          set.insert(set.end(), first.set.begin(), first.set.end());
        } else {
          set.push_back({first.cp, first.cp});
        }
        continue;
      }
      ++at_;  // '-'
      const ClassAtom last = class_atom();
      if (first.is_set || last.is_set) invalid("the class range" + where(at) + " starts or ends at \\d, \\w or \\s");
      if (first.cp > last.cp) invalid("the class range" + where(at) + " is out of order");
      set.push_back({first.cp, last.cp});
    }
    set = normalized(std::move(set));
    return chars(negated ? complement(set) : set);
  }

  ClassAtom class_atom() {
    const size_t at = at_;
    const uint32_t c = text_[at_++];
    if (c == '\\') return escape(at, true);
    ClassAtom a;
    a.cp = c;
    return a;
  }

  // After a backslash (at `at`).
  ClassAtom escape(size_t at, bool in_class) {
    if (done()) invalid("the pattern ends in a lone backslash");
    const uint32_t c = text_[at_++];
    ClassAtom a;
    const auto set = [&](const Ranges& r, bool negated) {
      a.is_set = true;
      a.set = negated ? complement(r) : r;
      return a;
    };
    switch (c) {
      case 'd': return set(kDigits, false);
      case 'D': return set(kDigits, true);
      case 'w': return set(kWord, false);
      case 'W': return set(kWord, true);
      case 's': return set(kSpace, false);
      case 'S': return set(kSpace, true);
      case 'b':
        if (!in_class) unsupported("the word boundary \\b", at);
        a.cp = '\b';
        return a;
      case 'B': unsupported("the non-word-boundary \\B", at);
      case 't': a.cp = '\t'; return a;
      case 'n': a.cp = '\n'; return a;
      case 'v': a.cp = '\v'; return a;
      case 'f': a.cp = '\f'; return a;
      case 'r': a.cp = '\r'; return a;
      case '0':
        if (is_digit(peek())) unsupported("the octal escape \\0" + std::string(1, static_cast<char>(peek())), at);
        a.cp = 0;
        return a;
      case 'x': a.cp = hex(at, 2); return a;
      case 'u': a.cp = unicode_escape(at); return a;
      case 'c':
        if (!is_ascii_alnum(peek()) || is_digit(peek())) invalid("\\c" + where(at) + " must be followed by a letter");
        a.cp = text_[at_++] % 32;
        return a;
      case 'p':
      case 'P': unsupported("the Unicode property escape \\" + std::string(1, static_cast<char>(c)), at);
      case 'k': unsupported("the named backreference \\k", at);
      default:
        break;
    }
    if (is_digit(c)) unsupported("the backreference \\" + std::string(1, static_cast<char>(c)), at);
    if (is_ascii_alnum(c)) invalid("unknown escape \\" + std::string(1, static_cast<char>(c)) + where(at));
    a.cp = c;  // punctuation, escaped: itself
    return a;
  }

  uint32_t hex(size_t at, int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const int d = hex_digit(peek());
      if (d < 0) invalid("the escape" + where(at) + " needs " + std::to_string(digits) + " hex digits");
      ++at_;
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // \uHHHH (a high and a low surrogate escape together are one code point) or \u{H...}.
  uint32_t unicode_escape(size_t at) {
    if (peek() == '{') {
      ++at_;
      uint32_t v = 0;
      size_t digits = 0;
      for (int d; (d = hex_digit(peek())) >= 0; ++digits, ++at_) {
        v = std::min<uint32_t>(v * 16 + static_cast<uint32_t>(d), kMaxCodePoint + 1);
      }
      if (digits == 0 || peek() != '}' || v > kMaxCodePoint) {
        invalid("the escape" + where(at) + " must be \\u{H...} with a code point up to 10FFFF");
      }
      ++at_;
      return v;
    }
    const uint32_t v = hex(at, 4);
    if (v >= 0xD800 && v <= 0xDBFF && peek() == '\\' && peek(1) == 'u') {
      const size_t back = at_;
      at_ += 2;
      bool four = true;
      for (size_t k = 0; k < 4; ++k) four = four && hex_digit(peek(k)) >= 0;
      if (four) {
        const uint32_t low = hex(at, 4);
        if (low >= 0xDC00 && low <= 0xDFFF) return 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
      }
      at_ = back;
    }
    return v;
  }

  std::vector<uint32_t> text_;
  size_t at_ = 0;
};

}  // namespace

bool utf8_code_points(std::string_view text, std::vector<uint32_t>& out) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const int length = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + static_cast<size_t>(length) > text.size()) return false;
    uint32_t cp = length == 1 ? b : b & (0xFFu >> (length + 1));
    for (int k = 1; k < length; ++k) {
      const auto c = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      if ((c & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    if (cp > kMaxCodePoint) return false;
    out.push_back(cp);
    i += static_cast<size_t>(length);
  }
  return true;
}

SchemaResult<PatternNode> parse_pattern(std::string_view pattern) {
  std::vector<uint32_t> text;
  if (!utf8_code_points(pattern, text)) return schema_error(ErrorCode::kSchemaInvalid, "the pattern is not UTF-8", "");
  try {
    return Parser(std::move(text)).whole();
  } catch (const PatternFailure& f) {
    return schema_error(f.code, "pattern: " + f.message, "");
  }
}

}  // namespace kvframe::runtime::schema
