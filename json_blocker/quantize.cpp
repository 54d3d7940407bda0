#include "quantize.h"

#include <algorithm>
#include <charconv>

namespace kvframe::json_blocker::detail {
namespace {

// Enough for any finite double in fixed notation with up to 15 decimals.
constexpr std::size_t kFixedChars = 400;

// Fixed notation, never exponents: a model reads 100000 more reliably than
// 1e+05, and shortest round-trip form keeps it exact.
std::string fixed_text(double value) {
  char text[kFixedChars];
  const auto written = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed);
  return std::string(text, written.ptr);
}

bool is_integer_token(std::string_view token) {
  return token.find_first_of(".eE") == std::string_view::npos;
}

}  // namespace

NumberQuantizer::NumberQuantizer(const Quantize& rule)
    : digits_(rule.round_digits), edges_(rule.levels) {
  for (double edge : edges_) edge_texts_.push_back(fixed_text(edge == 0 ? 0.0 : edge));  // no "-0"
}

std::string_view NumberQuantizer::apply(double value, std::string_view token,
                                        std::string& scratch) const {
  return digits_ ? round(value, token, scratch) : level(value);
}

std::string_view NumberQuantizer::round(double value, std::string_view token,
                                        std::string& scratch) const {
  // Already whole; rewriting it through a double would lose digits past 2^53.
  if (is_integer_token(token)) return token;
  scratch.resize(kFixedChars);
  const auto written = std::to_chars(scratch.data(), scratch.data() + scratch.size(), value,
                                     std::chars_format::fixed, *digits_);
  scratch.resize(static_cast<std::size_t>(written.ptr - scratch.data()));
  if (scratch.find('.') != std::string::npos) {
    scratch.erase(scratch.find_last_not_of('0') + 1);  // 3.50 -> 3.5, 3.00 -> 3.
    if (scratch.back() == '.') scratch.pop_back();
  }
  // -0.001 rounds to "-0", which would differ from 0.001's "0" for no reader.
  if (scratch == "-0") scratch = "0";
  return scratch;
}

std::string_view NumberQuantizer::level(double value) const {
  const auto above = std::upper_bound(edges_.begin(), edges_.end(), value);
  const std::size_t index = above == edges_.begin() ? 0 : static_cast<std::size_t>(above - edges_.begin()) - 1;
  return edge_texts_[index];
}

}  // namespace kvframe::json_blocker::detail
