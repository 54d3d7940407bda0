#include "json_leaves.h"

#include <algorithm>

#include "json_chars.h"
#include "pattern_leaf.h"

namespace kvframe::runtime::schema {
namespace {

// ---- string content ----

// The code points begun so far and where inside a character the text is.
struct StringPayload {
  uint32_t count;
  CharState chr;
};

StringPayload unpack(uint64_t p) {
  return {static_cast<uint32_t>(p), {static_cast<CharSub>((p >> 32) & 0xFF), static_cast<uint16_t>(p >> 40)}};
}

// Plain content needs no code point values, only the \u digits that decide
// surrogates: dropping the rest keeps the states inside a character few and
// shared by every character they could become.
uint64_t pack(const StringPayload& s) {
  const bool in_hex = s.chr.sub >= kHex0 && s.chr.sub <= kHex3;
  return uint64_t{s.count} | (uint64_t{s.chr.sub} << 32) | (uint64_t{in_hex ? s.chr.value : 0u} << 40);
}

}  // namespace

LeafStep string_step(const StringSpec& spec, uint64_t& payload, uint8_t b) {
  if (spec.pattern) return pattern_step(*spec.pattern, payload, b);
  StringPayload s = unpack(payload);
  const bool starts_character = s.chr.sub == kNormal;
  if (starts_character) {
    if (b == '"') return static_cast<int64_t>(s.count) >= spec.min ? LeafStep::kExit : LeafStep::kDead;
    if (spec.max != kUnbounded && static_cast<int64_t>(s.count) >= spec.max) return LeafStep::kDead;
  }
  uint32_t code_point = 0;
  if (char_step(s.chr, b, code_point) == CharStep::kDead) return LeafStep::kDead;
  // Without a maxLength the count only matters up to minLength: saturate it
  // there, so free text is one automaton state, not one per length.
  const bool saturate = spec.max == kUnbounded && static_cast<int64_t>(s.count) >= spec.min;
  if (starts_character && !saturate) ++s.count;
  payload = pack(s);
  return LeafStep::kStay;
}

int32_t string_min_completion(const StringSpec& spec, uint64_t payload, const ByteSet& single) {
  if (spec.pattern) return pattern_min_completion(*spec.pattern, payload);
  const StringPayload s = unpack(payload);
  const int32_t finish_character = char_finish_bytes(s.chr, single);
  if (finish_character >= kInf) return kInf;
  const int64_t short_by = std::max<int64_t>(0, spec.min - static_cast<int64_t>(s.count));
  if (short_by >= kInf) return kInf;
  return finish_character + static_cast<int32_t>(short_by) + 1;  // 'a' per missing code point, then '"'
}

bool string_at_boundary(uint64_t payload) { return unpack(payload).chr.sub == kNormal; }

int64_t string_code_points(uint64_t payload) { return unpack(payload).count; }

uint64_t string_advance(const StringSpec& spec, uint64_t payload, int64_t code_points) {
  StringPayload s = unpack(payload);
  const int64_t count = s.count;
  // As string_step counts: without a maxLength, no further than minLength.
  const int64_t advanced = spec.max == kUnbounded ? std::max(count, std::min(count + code_points, spec.min))
                                                  : count + code_points;
  s.count = static_cast<uint32_t>(advanced);
  return pack(s);
}

int32_t content_code_points(std::string_view bytes) {
  // A spec that never saturates the count and never ends the content.
  const StringSpec counting{INT32_MAX, kUnbounded, nullptr};
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
