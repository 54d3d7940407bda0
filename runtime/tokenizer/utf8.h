// UTF-8 helpers for the tokenizer (internal). Text reaching the tokenizer may
// hold any bytes, so every function here accepts invalid UTF-8: a byte that
// does not start a valid sequence is treated as a one-byte "character".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvframe::runtime::utf8 {

// Length of the valid UTF-8 sequence starting at text[pos] (1..4), or 1 when
// the bytes there are not a valid sequence (overlong, surrogate, truncated...).
std::size_t sequence_length(std::string_view text, std::size_t pos);

// Appends the UTF-8 encoding of code point cp (cp < 0x110000, no surrogates).
void append(std::string& out, uint32_t cp);

// Number of trailing bytes of text that are a proper prefix of a valid UTF-8
// sequence (the start of a character whose other bytes have not arrived yet);
// 0 when text ends on a character boundary or in bytes that can never become
// valid. TextStream holds exactly these bytes back.
std::size_t incomplete_tail(std::string_view text);

}  // namespace kvframe::runtime::utf8
