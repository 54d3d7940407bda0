#include "utf8.h"

namespace kvframe::runtime::utf8 {
namespace {

// What a lead byte promises (RFC 3629, table 3-7 of the Unicode standard):
// the sequence length and the allowed range of the second byte, which is
// where overlong forms, surrogates and code points past U+10FFFF are refused.
struct Lead {
  std::size_t length;  // 0: not a lead byte
  uint8_t second_min;
  uint8_t second_max;
};

Lead lead_of(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// How many bytes of the sequence starting at text[pos] are valid so far
// (at most lead.length), given that the text may stop early.
std::size_t valid_prefix(std::string_view text, std::size_t pos, const Lead& lead) {
  std::size_t n = 1;
  while (n < lead.length && pos + n < text.size()) {
    const auto b = static_cast<uint8_t>(text[pos + n]);
    const bool ok = n == 1 ? (b >= lead.second_min && b <= lead.second_max) : is_continuation(b);
    if (!ok) break;
    ++n;
  }
  return n;
}

}  // namespace

std::size_t sequence_length(std::string_view text, std::size_t pos) {
  const Lead lead = lead_of(static_cast<uint8_t>(text[pos]));
  if (lead.length <= 1) return 1;
  return valid_prefix(text, pos, lead) == lead.length ? lead.length : 1;
}

void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t incomplete_tail(std::string_view text) {
  // A character is at most 4 bytes, so only a lead byte among the last 3 can
  // still be waiting for continuation bytes.
  const std::size_t n = text.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const std::size_t pos = n - back;
    const auto b = static_cast<uint8_t>(text[pos]);
    if (is_continuation(b)) continue;
    const Lead lead = lead_of(b);
    const bool waiting = lead.length > back && valid_prefix(text, pos, lead) == back;
    return waiting ? back : 0;
  }
  return 0;
}

}  // namespace kvframe::runtime::utf8
