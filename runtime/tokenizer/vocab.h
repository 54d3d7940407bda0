// The vocabulary part of a GGUF file (internal): tokenizer.ggml.tokens,
// .token_type, .scores and the special token ids, read and checked once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::runtime {

// llama.cpp's token types, as stored in tokenizer.ggml.token_type.
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // <|im_start|>, <s>: matched in text only with parse_special
  kUserDefined = 4,  // added tokens that are always matched in text
  kUnused = 5,
  kByte = 6,         // SentencePiece byte fallback: "<0x0A>"
};

struct Vocab {
  std::vector<std::string> texts;  // as stored in the file
  std::vector<TokenType> types;
  std::vector<float> scores;       // empty when the file has none
  std::optional<TokenId> bos;
  std::optional<TokenId> eos;
  std::optional<TokenId> unknown;
  bool add_bos = false;  // tokenizer.ggml.add_bos_token: plain prompts start with bos

  int32_t size() const { return static_cast<int32_t>(texts.size()); }
  bool is_special(TokenId id) const {
    return types[static_cast<std::size_t>(id)] == TokenType::kControl ||
           types[static_cast<std::size_t>(id)] == TokenType::kUserDefined;
  }
};

// Reads tokens (required), token_type (optional: all normal), scores
// (optional here; SentencePiece requires them) and bos/eos/unknown ids
// (optional; out-of-range ids are kTokenizer), and add_bos_token (optional:
// false; llama.cpp's default for files that omit it).
Result<Vocab> read_vocab(const GgufFile& file);

}  // namespace kvframe::runtime
