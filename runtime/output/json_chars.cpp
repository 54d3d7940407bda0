#include "json_chars.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace kvframe::runtime::schema {
namespace {

int hex_value(uint8_t b) {
  if (b >= '0' && b <= '9') return b - '0';
  if (b >= 'a' && b <= 'f') return b - 'a' + 10;
  if (b >= 'A' && b <= 'F') return b - 'A' + 10;
  return -1;
}

bool in(uint8_t b, uint8_t lo, uint8_t hi) { return b >= lo && b <= hi; }

bool in_utf8(CharSub sub) { return sub >= kCont1 && sub <= kAfterF4; }

// The continuation byte range a UTF-8 state needs next, the state after
// it, and how many continuation bytes are left, this one included.
struct Continuation {
  uint8_t lo, hi;
  CharSub next;
  int left;
};
Continuation continuation(CharSub sub) {
  switch (sub) {
    case kCont1: return {0x80, 0xBF, kNormal, 1};
    case kCont2: return {0x80, 0xBF, kCont1, 2};
    case kCont3: return {0x80, 0xBF, kCont2, 3};
    case kAfterE0: return {0xA0, 0xBF, kCont1, 2};
    case kAfterED: return {0x80, 0x9F, kCont1, 2};
    case kAfterF0: return {0x90, 0xBF, kCont2, 3};
    default: return {0x80, 0x8F, kCont2, 3};  // kAfterF4
  }
}

// A lead byte: the state it starts and the payload bits it carries.
CharStep start_character(CharState& s, uint8_t b, uint32_t& code_point) {
  if (b == '"') return CharStep::kQuote;
  if (b == '\\') {
    s = {kEscape, 0};
    return CharStep::kPartial;
  }
  if (b < 0x20) return CharStep::kDead;  // control characters must be escaped
  if (b < 0x80) {
    code_point = b;
    return CharStep::kChar;
  }
  struct Lead {
    uint8_t lo, hi;
    CharSub sub;
    uint8_t payload_mask;
  };
  static constexpr Lead kLeads[] = {{0xC2, 0xDF, kCont1, 0x1F}, {0xE0, 0xE0, kAfterE0, 0x0F},
                                    {0xE1, 0xEC, kCont2, 0x0F}, {0xED, 0xED, kAfterED, 0x0F},
                                    {0xEE, 0xEF, kCont2, 0x0F}, {0xF0, 0xF0, kAfterF0, 0x07},
                                    {0xF1, 0xF3, kCont3, 0x07}, {0xF4, 0xF4, kAfterF4, 0x07}};
  const Lead* lead =
      std::find_if(std::begin(kLeads), std::end(kLeads), [&](const Lead& l) { return in(b, l.lo, l.hi); });
  if (lead == std::end(kLeads)) return CharStep::kDead;  // 80..C1 as a first byte, F5..FF
  s = {lead->sub, static_cast<uint16_t>(b & lead->payload_mask)};
  return CharStep::kPartial;
}

CharStep short_escape(CharState& s, uint8_t b, uint32_t& code_point) {
  switch (b) {
    case '"': case '\\': case '/': code_point = b; break;
    case 'b': code_point = '\b'; break;
    case 'f': code_point = '\f'; break;
    case 'n': code_point = '\n'; break;
    case 'r': code_point = '\r'; break;
    case 't': code_point = '\t'; break;
    default: return CharStep::kDead;
  }
  s = {};
  return CharStep::kChar;
}

uint32_t astral(uint32_t high_and_low_bits) { return 0x10000 + high_and_low_bits; }

}  // namespace

bool high_surrogate_prefix(uint16_t hex, int n) {
  if (n < 2) return false;
  const int top = hex >> (4 * (n - 2));
  return top >= 0xD8 && top <= 0xDB;
}

CharStep char_step(CharState& s, uint8_t b, uint32_t& code_point) {
  switch (s.sub) {
    case kNormal:
      return start_character(s, b, code_point);
    case kEscape:
      if (b != 'u') return short_escape(s, b, code_point);
      s = {kHex0, 0};
      return CharStep::kPartial;
    case kHex0:
    case kHex1:
    case kHex2:
    case kHex3: {
      const int digit = hex_value(b);
      if (digit < 0) return CharStep::kDead;
      const int n = s.sub - kHex0 + 1;
      const auto hex = static_cast<uint16_t>(s.value * 16 + digit);
      if (n == 2 && hex >= 0xDC && hex <= 0xDF) return CharStep::kDead;  // a lone low surrogate
      if (n < 4) {
        s = {static_cast<CharSub>(kHex0 + n), hex};
        return CharStep::kPartial;
      }
      if (high_surrogate_prefix(hex, 4)) {
        s = {kHighBackslash, static_cast<uint16_t>(hex - 0xD800)};
        return CharStep::kPartial;
      }
      code_point = hex;
      s = {};
      return CharStep::kChar;
    }
    case kHighBackslash:
      if (b != '\\') return CharStep::kDead;
      s.sub = kHighU;
      return CharStep::kPartial;
    case kHighU:
      if (b != 'u') return CharStep::kDead;
      s.sub = kLowHex0;
      return CharStep::kPartial;
    case kLowHex0:
      if (b != 'D' && b != 'd') return CharStep::kDead;
      s.sub = kLowHex1;
      return CharStep::kPartial;
    case kLowHex1:
      if (!in(b, 'C', 'F') && !in(b, 'c', 'f')) return CharStep::kDead;
      s = {kLowHex2, static_cast<uint16_t>((s.value << 2) | (hex_value(b) - 0xC))};
      return CharStep::kPartial;
    case kLowHex2:
    case kLowHex3: {
      const int digit = hex_value(b);
      if (digit < 0) return CharStep::kDead;
      const uint32_t bits = (uint32_t{s.value} << 4) | static_cast<uint32_t>(digit);
      if (s.sub == kLowHex2) {
        s = {kLowHex3, static_cast<uint16_t>(bits)};
        return CharStep::kPartial;
      }
      code_point = astral(bits);
      s = {};
      return CharStep::kChar;
    }
    default: {  // UTF-8 continuation bytes
      const Continuation c = continuation(s.sub);
      if (!in(b, c.lo, c.hi)) return CharStep::kDead;
      const uint32_t bits = (uint32_t{s.value} << 6) | (b & 0x3Fu);
      if (c.next == kNormal) {
        code_point = bits;
        s = {};
        return CharStep::kChar;
      }
      s = {c.next, static_cast<uint16_t>(bits)};
      return CharStep::kPartial;
    }
  }
}

int32_t char_finish_bytes(const CharState& s, const ByteSet& single) {
  switch (s.sub) {
    case kNormal: return 0;
    case kEscape: return 1;
    case kHex0:
    case kHex1:
    case kHex2:
    case kHex3: {
      const int n = s.sub - kHex0;
      return 4 - n + (high_surrogate_prefix(s.value, n) ? 6 : 0);  // + "\uDC00"
    }
    case kHighBackslash: return 6;
    case kHighU: return 5;
    case kLowHex0:
    case kLowHex1:
    case kLowHex2:
    case kLowHex3:
      return 4 - (s.sub - kLowHex0);
    default: {
      // UTF-8 continuation bytes: each needs a single-byte token in its range.
      int32_t bytes = 0;
      for (CharSub sub = s.sub; sub != kNormal;) {
        const Continuation c = continuation(sub);
        bool any = false;
        for (int b = c.lo; b <= c.hi && !any; ++b) any = single[static_cast<size_t>(b)];
        if (!any) return kInf;
        ++bytes;
        sub = c.next;
      }
      return bytes;
    }
  }
}

CodePointHull reachable_hull(const CharState& s) {
  if (in_utf8(s.sub)) {
    const Continuation c = continuation(s.sub);
    const int shift = 6 * (c.left - 1);
    const uint32_t lo = ((uint32_t{s.value} << 6) | (c.lo & 0x3Fu)) << shift;
    const uint32_t hi = (((uint32_t{s.value} << 6) | (c.hi & 0x3Fu)) << shift) | ((1u << shift) - 1);
    return {lo, hi};
  }
  switch (s.sub) {
    case kHex0:
    case kHex1:
    case kHex2:
    case kHex3: {
      // The digits so far span [a, b] of the BMP; those among the high
      // surrogates D800..DBFF stand for the astral planes instead, and the
      // low surrogates for nothing.
      const int shift = 4 * (4 - (s.sub - kHex0));
      const uint32_t a = uint32_t{s.value} << shift, b = a | ((1u << shift) - 1);
      uint32_t lo = kMaxCodePoint, hi = 0;
      if (a <= 0xD7FF) {
        lo = a;
        hi = std::min<uint32_t>(b, 0xD7FF);
      }
      if (b >= 0xE000) {
        lo = std::min(lo, std::max<uint32_t>(a, 0xE000));
        hi = b;
      }
      const uint32_t high_lo = std::max<uint32_t>(a, 0xD800), high_hi = std::min<uint32_t>(b, 0xDBFF);
      if (high_lo <= high_hi) {
        lo = std::min(lo, astral((high_lo - 0xD800) << 10));
        hi = astral(((high_hi - 0xD800) << 10) | 0x3FF);
      }
      return {lo, hi};
    }
    case kHighBackslash:
    case kHighU:
    case kLowHex0:
    case kLowHex1:
      return {astral(uint32_t{s.value} << 10), astral((uint32_t{s.value} << 10) | 0x3FF)};
    case kLowHex2:
      return {astral(uint32_t{s.value} << 8), astral((uint32_t{s.value} << 8) | 0xFF)};
    case kLowHex3:
      return {astral(uint32_t{s.value} << 4), astral((uint32_t{s.value} << 4) | 0xF)};
    default:  // kEscape (kNormal is not asked): \u reaches every code point
      return {0, kMaxCodePoint};
  }
}

namespace {

// The bytes that can come next in `sub` lie in [lo, hi]: the search need
// not try the rest.
std::pair<int, int> candidate_bytes(CharSub sub) {
  if (in_utf8(sub)) {
    const Continuation c = continuation(sub);
    return {c.lo, c.hi};
  }
  switch (sub) {
    case kEscape: return {'"', 'u'};
    case kHighBackslash: return {'\\', '\\'};
    case kHighU: return {'u', 'u'};
    case kNormal: return {0, 255};
    default: return {'0', 'f'};  // hex digits
  }
}

// Depth-first over the writable bytes, shortest first found being kept:
// a branch whose reachable code points miss [lo, hi] is cut, one whose
// code points all fall inside it ends by its cheapest finish, and only the
// few that straddle an end of [lo, hi] are followed byte by byte.
void search_char(const CharState& s, int32_t depth, uint32_t lo, uint32_t hi, const ByteSet& single, int32_t& best) {
  const int32_t floor = s.sub == kNormal ? 1 : char_finish_bytes(s, single);
  if (floor >= kInf || depth + floor >= best) return;
  const auto [first, last] = candidate_bytes(s.sub);
  for (int b = first; b <= last; ++b) {
    if (!single[static_cast<size_t>(b)]) continue;
    CharState next = s;
    uint32_t code_point = 0;
    switch (char_step(next, static_cast<uint8_t>(b), code_point)) {
      case CharStep::kChar:
        if (code_point >= lo && code_point <= hi) best = std::min(best, depth + 1);
        break;
      case CharStep::kPartial: {
        const CodePointHull h = reachable_hull(next);
        if (h.hi < lo || h.lo > hi) break;
        if (h.lo >= lo && h.hi <= hi) {
          const int32_t finish = char_finish_bytes(next, single);
          if (finish < kInf) best = std::min(best, depth + 1 + finish);
        } else {
          search_char(next, depth + 1, lo, hi, single, best);
        }
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace

int32_t cheapest_char(const CharState& state, uint32_t lo, uint32_t hi, const ByteSet& single) {
  int32_t best = kInf;
  search_char(state, 0, lo, hi, single, best);
  return best;
}

}  // namespace kvframe::runtime::schema
