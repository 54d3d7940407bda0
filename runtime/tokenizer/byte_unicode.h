// GPT-2's byte <-> unicode mapping (internal): byte-level BPE vocabularies
// store every token as printable characters, one per byte. Bytes that are
// printable Latin-1 ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the
// other 68 (control bytes, space, 0x7F-0xA0, 0xAD) become U+0100 + n in byte
// order, so a space is "Ġ" (U+0120) and a newline "Ċ" (U+010A).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kvframe::runtime::byte_unicode {

// The UTF-8 text of the character that stands for byte b.
std::string_view char_for_byte(uint8_t b);

// Appends the bytes a byte-level token text stands for. False (out unchanged)
// when the text holds a character that stands for no byte.
bool append_bytes(std::string_view token_text, std::string& out);

}  // namespace kvframe::runtime::byte_unicode
