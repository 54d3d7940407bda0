// An enum's names written once and read both ways: the name a value prints
// as, and the value a name (a command-line flag, a rules file's field)
// parses to. Before, each such enum spelled its names twice, a switch for
// printing and a loop or an if-chain for parsing. An enum that is only ever
// printed keeps its switch, which the compiler checks for a missing value.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace kvframe {

template <class Enum>
struct NamedValue {
  Enum value;
  const char* name;
};

// The name of `value` in `names`; `fallback` for a value the table lacks (an
// integer cast to the enum).
template <class Enum, std::size_t N>
constexpr const char* name_of_value(const NamedValue<Enum> (&names)[N], Enum value, const char* fallback) {
  for (const NamedValue<Enum>& named : names) {
    if (named.value == value) return named.name;
  }
  return fallback;
}

// The value `name` names in `names`; nothing for a name the table lacks.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> value_of_name(const NamedValue<Enum> (&names)[N], std::string_view name) {
  for (const NamedValue<Enum>& named : names) {
    if (name == named.name) return named.value;
  }
  return std::nullopt;
}

}  // namespace kvframe
