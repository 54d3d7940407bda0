// Vocabularies and helpers shared by the json_schema tests.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/runtime_output/json_schema.h"

namespace kvframe::runtime::schema_test {

inline constexpr int32_t kByteEos = 256;  // the byte vocabulary's end token (special)
inline constexpr int32_t kBytePad = 257;  // a special token that is not an end token

// Token i < 256 is the byte i; then <eos> and <pad>.
inline std::shared_ptr<const TokenVocabulary> byte_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  bytes.emplace_back("<eos>");
  bytes.emplace_back("<pad>");
  std::vector<bool> special(bytes.size(), false);
  special[kByteEos] = special[kBytePad] = true;
  return std::make_shared<const TokenVocabulary>(std::move(bytes), std::move(special), std::vector<int32_t>{kByteEos});
}

// The byte vocabulary plus multi-byte tokens that cross JSON structure the
// way real BPE tokens do. Returns the vocabulary; `words` gets the extra
// tokens' ids in order.
inline std::vector<std::string> word_tokens() {
  return {"{\"", "\":", "\",", "\"}", "}}", "fold", "call", "raise", "action", "amount", "say", "12", "345",
          "1960", "00", "-1", ".5", "\n", " the", " fold", " call", "\": \"", "\", \"", "true", "null", "\xC3\xA9",
          "\xE2\x82", "\xAC", "\xF0\x9F\x98\x80", "\\n", "\\u00", "ab", "abc", "  ", "\":\"", "[\"", "\"]", "],",
          "}]", "\"\"", "0", ", ", ": "};
}

inline std::shared_ptr<const TokenVocabulary> word_vocabulary() {
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  bytes.emplace_back("<eos>");
  bytes.emplace_back("<pad>");
  for (const std::string& w : word_tokens()) bytes.push_back(w);
  std::vector<bool> special(bytes.size(), false);
  special[kByteEos] = special[kBytePad] = true;
  return std::make_shared<const TokenVocabulary>(std::move(bytes), std::move(special), std::vector<int32_t>{kByteEos});
}

inline int32_t word_token(std::string_view word) {
  const auto words = word_tokens();
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] == word) return 258 + static_cast<int32_t>(i);
  }
  return -1;
}

inline std::shared_ptr<CompiledSchema> compile_or_die(std::string_view schema,
                                                      const std::shared_ptr<const TokenVocabulary>& vocab) {
  auto compiled = compile_schema(schema, vocab);
  if (!compiled) throw std::runtime_error(compiled.error().to_string());
  return *compiled;
}

// Feeds `text` byte by byte through the byte vocabulary; whether every byte
// was accepted and the result is complete.
inline bool accepts(const std::shared_ptr<CompiledSchema>& schema, std::string_view text) {
  JsonConstraint c(schema);
  for (char ch : text) {
    if (!c.accept(static_cast<uint8_t>(ch)).ok()) return false;
  }
  return c.complete();
}

// Whether `text` is a valid prefix (every byte accepted).
inline bool accepts_prefix(const std::shared_ptr<CompiledSchema>& schema, std::string_view text) {
  JsonConstraint c(schema);
  for (char ch : text) {
    if (!c.accept(static_cast<uint8_t>(ch)).ok()) return false;
  }
  return true;
}

}  // namespace kvframe::runtime::schema_test
