// Tokenizer built from a GGUF file's vocabulary (tokenizer.ggml.*).
//
//   'gpt2'  byte-level BPE with a pre-tokenizer chosen by tokenizer.ggml.pre
//           (smollm, llama3 / llama-bpe, qwen2, gpt2 / default)
//   'llama' SentencePiece-style BPE over scores, "▁" for spaces, <0xNN> byte
//           fallback
//
// Special (control / user-defined) tokens are matched in the text before BPE
// runs, so "<|im_start|>" is one token, as in the reference tokenizers.
// Results equal Hugging Face `tokenizers` on the same vocabulary
// (tests/runtime/tokenizer_reference_test.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/runtime/error.h"
#include "kvframe/runtime/gguf.h"

namespace kvframe::runtime {

using TokenId = int32_t;

class Tokenizer {
 public:
  enum class Model { kBytePairGpt2, kSentencePieceLlama };

  // Errors: kMissingKey / kWrongKeyType for absent or mistyped tokenizer keys,
  // kTokenizer for an unknown tokenizer.ggml.model or .pre (the message names it).
  static Result<Tokenizer> from_gguf(const GgufFile& file);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Any bytes are accepted (byte-level BPE covers every byte; SentencePiece
  // falls back to <0xNN>). add_bos prepends bos_id() when the vocabulary has one.
  // parse_special=false treats "<|im_end|>" in the text as plain characters.
  std::vector<TokenId> encode(std::string_view text, bool add_bos = false,
                              bool parse_special = true) const;

  // Concatenated bytes of the tokens (special tokens render as their text).
  // decode(encode(s)) == s for every s.
  std::string decode(const std::vector<TokenId>& ids) const;
  // The bytes of one token: may be part of a UTF-8 character (see TextStream).
  std::string token_bytes(TokenId id) const;

  Model model() const;
  int32_t n_vocab() const;
  std::optional<TokenId> bos_id() const;
  std::optional<TokenId> eos_id() const;
  std::optional<TokenId> find_token(std::string_view text) const;  // exact vocabulary entry
  bool is_special(TokenId id) const;  // control or user-defined token

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Turns a stream of token ids into text without ever splitting a UTF-8
// character: bytes of an incomplete character wait for the next token.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer);
  std::string push(TokenId id);  // text now complete (possibly empty)
  std::string finish();          // whatever is left, invalid bytes included
 private:
  const Tokenizer* tokenizer_;
  std::string pending_;
};

}  // namespace kvframe::runtime
