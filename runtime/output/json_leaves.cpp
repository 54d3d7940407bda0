#include "json_leaves.h"

#include <algorithm>

namespace kvframe::runtime::schema {
namespace {

// ---- string content ----

// Where inside a character the content is. The UTF-8 states name the range
// the next continuation byte must fall in (Unicode table 3-7).
enum Sub : uint8_t {
  kNormal,
  kCont1,      // 1 more continuation byte, 80..BF
  kCont2,      // 2 more, the next 80..BF
  kCont3,      // 3 more, the next 80..BF
  kAfterE0,    // 2 more, the next A0..BF (no overlong 3-byte forms)
  kAfterED,    // 2 more, the next 80..9F (no surrogates)
  kAfterF0,    // 3 more, the next 90..BF (no overlong 4-byte forms)
  kAfterF4,    // 3 more, the next 80..8F (nothing past U+10FFFF)
  kEscape,     // after a backslash
  kHex0,       // \u and 0..3 hex digits; the value so far is kept
  kHex1,
  kHex2,
  kHex3,
  kHighBackslash,  // after a high surrogate escape: its low half must follow
  kHighU,
  kLowHex0,    // the low half: D, then C..F, then two more
  kLowHex1,
  kLowHex2,
  kLowHex3,
};

struct StringPayload {
  uint32_t count;  // code points begun
  Sub sub;
  uint16_t hex;    // \u digits so far
};

StringPayload unpack(uint64_t p) {
  return {static_cast<uint32_t>(p), static_cast<Sub>((p >> 32) & 0xFF), static_cast<uint16_t>(p >> 40)};
}

uint64_t pack(const StringPayload& s) {
  return uint64_t{s.count} | (uint64_t{s.sub} << 32) | (uint64_t{s.hex} << 40);
}

int hex_value(uint8_t b) {
  if (b >= '0' && b <= '9') return b - '0';
  if (b >= 'a' && b <= 'f') return b - 'a' + 10;
  if (b >= 'A' && b <= 'F') return b - 'A' + 10;
  return -1;
}

bool in(uint8_t b, uint8_t lo, uint8_t hi) { return b >= lo && b <= hi; }

// The continuation byte range a UTF-8 state needs next, and the state after it.
struct Continuation {
  uint8_t lo, hi;
  Sub next;
};
Continuation continuation(Sub sub) {
  switch (sub) {
    case kCont1: return {0x80, 0xBF, kNormal};
    case kCont2: return {0x80, 0xBF, kCont1};
    case kCont3: return {0x80, 0xBF, kCont2};
    case kAfterE0: return {0xA0, 0xBF, kCont1};
    case kAfterED: return {0x80, 0x9F, kCont1};
    case kAfterF0: return {0x90, 0xBF, kCont2};
    default: return {0x80, 0x8F, kCont2};  // kAfterF4
  }
}

// Whether the \u value read so far (n digits) is the start of a high surrogate.
bool high_surrogate_prefix(uint16_t hex, int n) {
  if (n < 2) return false;
  const int top = hex >> (4 * (n - 2));
  return top >= 0xD8 && top <= 0xDB;
}

LeafStep start_character(const StringSpec& spec, StringPayload& s, uint8_t b) {
  if (b == '"') return static_cast<int64_t>(s.count) >= spec.min ? LeafStep::kExit : LeafStep::kDead;
  if (spec.max != kUnbounded && static_cast<int64_t>(s.count) >= spec.max) return LeafStep::kDead;
  Sub next;
  if (b == '\\') {
    next = kEscape;
  } else if (b < 0x20) {
    return LeafStep::kDead;  // control characters must be escaped
  } else if (b < 0x80) {
    next = kNormal;
  } else if (in(b, 0xC2, 0xDF)) {
    next = kCont1;
  } else if (b == 0xE0) {
    next = kAfterE0;
  } else if (b == 0xED) {
    next = kAfterED;
  } else if (in(b, 0xE1, 0xEF)) {
    next = kCont2;
  } else if (b == 0xF0) {
    next = kAfterF0;
  } else if (in(b, 0xF1, 0xF3)) {
    next = kCont3;
  } else if (b == 0xF4) {
    next = kAfterF4;
  } else {
    return LeafStep::kDead;  // 80..C1 as a first byte, F5..FF
  }
  // Without a maxLength the count only matters up to minLength: saturate it
  // there, so free text is one automaton state, not one per length.
  const bool saturate = spec.max == kUnbounded && static_cast<int64_t>(s.count) >= spec.min;
  if (!saturate) ++s.count;
  s.sub = next;
  return LeafStep::kStay;
}

}  // namespace

LeafStep string_step(const StringSpec& spec, uint64_t& payload, uint8_t b) {
  StringPayload s = unpack(payload);
  LeafStep result = LeafStep::kStay;
  switch (s.sub) {
    case kNormal:
      result = start_character(spec, s, b);
      break;
    case kCont1:
    case kCont2:
    case kCont3:
    case kAfterE0:
    case kAfterED:
    case kAfterF0:
    case kAfterF4: {
      const Continuation c = continuation(s.sub);
      if (!in(b, c.lo, c.hi)) return LeafStep::kDead;
      s.sub = c.next;
      break;
    }
    case kEscape:
      if (b == 'u') {
        s.sub = kHex0;
        s.hex = 0;
      } else if (b == '"' || b == '\\' || b == '/' || b == 'b' || b == 'f' || b == 'n' || b == 'r' || b == 't') {
        s.sub = kNormal;
      } else {
        return LeafStep::kDead;
      }
      break;
    case kHex0:
    case kHex1:
    case kHex2:
    case kHex3: {
      const int digit = hex_value(b);
      if (digit < 0) return LeafStep::kDead;
      const int n = s.sub - kHex0 + 1;
      s.hex = static_cast<uint16_t>(s.hex * 16 + digit);
      if (n == 2 && (s.hex >= 0xDC && s.hex <= 0xDF)) return LeafStep::kDead;  // a lone low surrogate
      if (n < 4) {
        s.sub = static_cast<Sub>(kHex0 + n);
      } else {
        s.sub = high_surrogate_prefix(s.hex, 4) ? kHighBackslash : kNormal;
        s.hex = 0;
      }
      break;
    }
    case kHighBackslash:
      if (b != '\\') return LeafStep::kDead;
      s.sub = kHighU;
      break;
    case kHighU:
      if (b != 'u') return LeafStep::kDead;
      s.sub = kLowHex0;
      break;
    case kLowHex0:
      if (b != 'D' && b != 'd') return LeafStep::kDead;
      s.sub = kLowHex1;
      break;
    case kLowHex1:
      if (!in(b, 'C', 'F') && !in(b, 'c', 'f')) return LeafStep::kDead;
      s.sub = kLowHex2;
      break;
    case kLowHex2:
    case kLowHex3:
      if (hex_value(b) < 0) return LeafStep::kDead;
      s.sub = s.sub == kLowHex2 ? kLowHex3 : kNormal;
      break;
  }
  payload = pack(s);
  return result;
}

int32_t string_min_completion(const StringSpec& spec, uint64_t payload, const ByteSet& single) {
  const StringPayload s = unpack(payload);
  int32_t finish_character = 0;  // bytes to the end of the current character
  switch (s.sub) {
    case kNormal:
      break;
    case kEscape:
      finish_character = 1;
      break;
    case kHex0:
    case kHex1:
    case kHex2:
    case kHex3: {
      const int n = s.sub - kHex0;
      finish_character = 4 - n + (high_surrogate_prefix(s.hex, n) ? 6 : 0);  // + "\uDC00"
      break;
    }
    case kHighBackslash: finish_character = 6; break;
    case kHighU: finish_character = 5; break;
    case kLowHex0:
    case kLowHex1:
    case kLowHex2:
    case kLowHex3:
      finish_character = 4 - (s.sub - kLowHex0);
      break;
    default:
      // UTF-8 continuation bytes: each needs a single-byte token in its range.
      for (Sub sub = s.sub; sub != kNormal;) {
        const Continuation c = continuation(sub);
        bool any = false;
        for (int b = c.lo; b <= c.hi && !any; ++b) any = single[static_cast<size_t>(b)];
        if (!any) return kInf;
        ++finish_character;
        sub = c.next;
      }
  }
  const int64_t short_by = std::max<int64_t>(0, spec.min - static_cast<int64_t>(s.count));
  if (short_by >= kInf) return kInf;
  return finish_character + static_cast<int32_t>(short_by) + 1;  // 'a' per missing code point, then '"'
}

bool string_at_boundary(uint64_t payload) { return unpack(payload).sub == kNormal; }

int64_t string_code_points(uint64_t payload) { return unpack(payload).count; }

uint64_t string_advance(const StringSpec& spec, uint64_t payload, int64_t code_points) {
  StringPayload s = unpack(payload);
  const int64_t count = s.count;
  // As start_character counts: without a maxLength, no further than minLength.
  const int64_t advanced = spec.max == kUnbounded ? std::max(count, std::min(count + code_points, spec.min))
                                                  : count + code_points;
  s.count = static_cast<uint32_t>(advanced);
  return pack(s);
}

int32_t content_code_points(std::string_view bytes) {
  // A spec that never saturates the count and never ends the content.
  const StringSpec counting{INT32_MAX, kUnbounded};
  uint64_t payload = kStringStart;
  for (char c : bytes) {
    if (string_step(counting, payload, static_cast<uint8_t>(c)) != LeafStep::kStay) return -1;
  }
  return string_at_boundary(payload) ? static_cast<int32_t>(unpack(payload).count) : -1;
}

// ---- numbers ----

namespace {

struct NumberText {
  bool negative = false;
  std::string_view int_digits, fraction;
  bool point = false;
};

bool parse_number_text(const NumberSpec& spec, std::string_view text, NumberText& out) {
  size_t i = 0;
  if (i < text.size() && text[i] == '-') {
    out.negative = true;
    ++i;
  }
  const size_t int_begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  out.int_digits = text.substr(int_begin, i - int_begin);
  if (out.int_digits.size() > static_cast<size_t>(spec.max_int_digits)) return false;
  if (out.int_digits.size() > 1 && out.int_digits[0] == '0') return false;
  if (i == text.size()) return true;
  if (text[i] != '.' || out.int_digits.empty() || spec.fraction_digits == 0) return false;
  out.point = true;
  const size_t fraction_begin = ++i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  out.fraction = text.substr(fraction_begin, i - fraction_begin);
  return i == text.size() && out.fraction.size() <= static_cast<size_t>(spec.fraction_digits);
}

Int128 digits_value(std::string_view digits) {
  Int128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

// Whether {first, first + step, ..., last} meets [lo, hi].
bool progression_meets(Int128 first, Int128 last, Int128 step, Int128 lo, Int128 hi) {
  if (last < lo || first > hi) return false;
  const Int128 from = std::max(first, lo);
  const Int128 v = first + (from - first + step - 1) / step * step;
  return v <= std::min(last, hi);
}

}  // namespace

bool number_syntax_ok(const NumberSpec& spec, std::string_view text) {
  NumberText parsed;
  return parse_number_text(spec, text, parsed);
}

// Every way the text can end is a "shape": how many more integer digits, how
// many fraction digits in all, and (for an empty text) the sign. The values a
// shape reaches are an arithmetic progression in the spec's scaled units, so
// whether it meets [lo, hi] is exact integer arithmetic; the outlook is the
// shortest shape that does.
NumberOutlook number_outlook(const NumberSpec& spec, std::string_view text) {
  NumberOutlook outlook;
  NumberText p;
  if (!parse_number_text(spec, text, p)) return outlook;
  const int F = spec.fraction_digits;
  const Int128 unit = pow10(F);
  // Magnitudes {first, first + step, ..., last}, negated for a '-'.
  const auto consider = [&](Int128 first, Int128 last, Int128 step, bool negative, int added) {
    const bool meets = negative ? progression_meets(-last, -first, step, spec.lo, spec.hi)
                                : progression_meets(first, last, step, spec.lo, spec.hi);
    if (!meets) return;
    outlook.min_added = std::min(outlook.min_added, added);
    if (added > 0) outlook.can_extend = true;
  };
  // Integer parts [int_lo, int_hi], each with any g fraction digits.
  const auto consider_integers = [&](Int128 int_lo, Int128 int_hi, int g, bool negative, int added) {
    const Int128 step = pow10(F - g);
    consider(int_lo * unit, int_hi * unit + (pow10(g) - 1) * step, step, negative, added);
  };
  const auto fraction_cost = [](int g) { return g == 0 ? 0 : g + 1; };  // '.' and the digits

  if (p.point) {  // the integer part is fixed; more fraction digits may come
    const auto f = static_cast<int>(p.fraction.size());
    const Int128 first = digits_value(p.int_digits) * unit + digits_value(p.fraction) * pow10(F - f);
    for (int g = std::max(f, 1); g <= F; ++g) {
      const Int128 step = pow10(F - g);
      consider(first, first + (pow10(g - f) - 1) * step, step, p.negative, g - f);
    }
    return outlook;
  }
  if (p.int_digits.empty()) {  // "" or "-": the integer part is all to come
    for (int sign = 0; sign < 2; ++sign) {
      const bool negative = sign == 1;
      if (p.negative && !negative) continue;
      const int sign_cost = negative && !p.negative ? 1 : 0;
      for (int k = 1; k <= spec.max_int_digits; ++k) {
        const Int128 int_lo = k == 1 ? 0 : pow10(k - 1);
        for (int g = 0; g <= F; ++g) {
          consider_integers(int_lo, pow10(k) - 1, g, negative, sign_cost + k + fraction_cost(g));
        }
      }
    }
    return outlook;
  }
  const Int128 base = digits_value(p.int_digits);
  const int more_digits = p.int_digits == "0" ? 0 : spec.max_int_digits - static_cast<int>(p.int_digits.size());
  for (int k = 0; k <= more_digits; ++k) {
    const Int128 int_lo = base * pow10(k);
    for (int g = 0; g <= F; ++g) consider_integers(int_lo, int_lo + pow10(k) - 1, g, p.negative, k + fraction_cost(g));
  }
  return outlook;
}

}  // namespace kvframe::runtime::schema
