// A whitespace-insensitive form of a Jinja chat template (internal), so a
// template is recognised however it is indented, wrapped or quoted.
//
// Two templates with the same canonical form render the same text, provided
// the template prints nothing outside its tags: canonical_form() checks that
// by applying Jinja's whitespace control as transformers configures it
// (trim_blocks and lstrip_blocks on; "-" strips, "+" keeps), and refuses a
// template where any text between tags would still be printed.
//
// In the canonical form, comments are gone; each tag keeps its delimiters
// ("{{", "{%") and its content without whitespace outside string literals;
// string literals are their decoded value between \x01 delimiters, whatever
// the quotes and escapes were, and literals joined by + are one literal;
// x['name'] is written x.name.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvframe::runtime {

inline constexpr char kCanonicalQuote = '\x01';

// nullopt: the template prints text outside its tags, or is not well formed
// (an unterminated tag or string).
std::optional<std::string> canonical_form(std::string_view template_text);

}  // namespace kvframe::runtime
