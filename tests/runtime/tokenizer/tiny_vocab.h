// Small vocabulary-only GGUF files for tokenizer unit tests, written with
// GgufWriter: a byte-level vocabulary with chosen merges and special tokens,
// or a SentencePiece one with chosen pieces and scores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "byte_level_text.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::test {

// GGUF token types (tokenizer.ggml.token_type).
enum TokenKind : int32_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

struct TinyVocab {
  std::string model = "gpt2";
  std::optional<std::string> pre = "gpt2";
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<float> scores;         // written when not empty
  std::vector<std::string> merges;   // written for gpt2
  bool write_types = true;
  std::optional<int32_t> bos;
  std::optional<int32_t> eos;
  std::optional<int32_t> unknown;
  std::optional<bool> add_space_prefix;
  std::optional<bool> add_bos_token;
  std::optional<std::string> chat_template;

  runtime::TokenId add(std::string text, int32_t type = kNormal, float score = 0.0f);
  // Byte-level: a merge of two byte strings; adds the merged token if new.
  runtime::TokenId add_merge(std::string_view left, std::string_view right);
  std::vector<uint8_t> bytes() const;
};

// The 256 byte tokens, ids 0..255 in byte order, pre-tokenizer "gpt2".
TinyVocab byte_level_vocab();

// Parses the file and builds its tokenizer (parse errors come back too).
Result<runtime::Tokenizer> load_tokenizer(const TinyVocab& vocab);
// load_tokenizer that records a test failure when the vocabulary is refused.
runtime::Tokenizer load_tokenizer_or_fail(const TinyVocab& vocab);
Result<runtime::GgufFile> parse(const TinyVocab& vocab);

}  // namespace kvframe::test
