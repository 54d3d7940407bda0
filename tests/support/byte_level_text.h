// The token text of bytes in a byte-level (GPT-2) BPE vocabulary, for the
// test files that write such vocabularies: tiny models and tiny tokenizers.
#pragma once

#include <string>
#include <string_view>

namespace kvframe::test {

// A byte string as a byte-level vocabulary writes it: " the" -> "Ġthe".
std::string byte_level_text(std::string_view bytes);

}  // namespace kvframe::test
