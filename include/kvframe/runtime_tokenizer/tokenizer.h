// Tokenizer built from a GGUF file's vocabulary (tokenizer.ggml.*).
//
//   'gpt2'  byte-level BPE with a pre-tokenizer chosen by tokenizer.ggml.pre
//           (smollm, llama3 / llama-bpe, qwen2, gpt2 / default)
//   'llama' SentencePiece-style BPE over scores, "▁" for spaces, <0xNN> byte
//           fallback
//
// Special (control / user-defined) tokens are matched in the text before BPE
// runs, so "<|im_start|>" is one token, as in the reference tokenizers.
// Results equal Hugging Face `tokenizers` on the same vocabulary, and
// sentencepiece for 'llama' vocabularies (tests/runtime/tokenizer/).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_gguf/gguf.h"

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

  // Any bytes are accepted, invalid UTF-8 included (byte-level BPE works on
  // bytes; SentencePiece falls back to <0xNN>). add_bos prepends bos_id()
  // when the vocabulary has one.
  // parse_special=false treats "<|im_end|>" in the text as plain characters;
  // user-defined tokens are matched either way (HF's non-special added tokens).
  std::vector<TokenId> encode(std::string_view text, bool add_bos = false,
                              bool parse_special = true) const;

  // Concatenated bytes of the tokens (special tokens render as their text).
  // decode(encode(s)) == s for every s whose bytes all have a token: 'gpt2'
  // vocabularies may lack some (SmolLM2 has none for six control bytes and
  // the 15 bytes no assigned character's UTF-8 uses; encode drops them, as
  // HF does); 'llama' ones need byte tokens, and "▁" in s decodes as a
  // space. Ids outside the vocabulary decode to nothing.
  std::string decode(const std::vector<TokenId>& ids) const;
  // The bytes of one token: may be part of a UTF-8 character (see TextStream).
  std::string token_bytes(TokenId id) const;

  Model model() const;
  int32_t n_vocab() const;
  std::optional<TokenId> bos_id() const;
  // Whether plain (non-chat) prompts start with bos: the file's
  // tokenizer.ggml.add_bos_token (true for Llama 3, false for SmolLM2 and
  // Qwen2). Pass it as encode()'s add_bos. Chat templates write their own.
  bool add_bos_by_default() const;
  std::optional<TokenId> eos_id() const;
  // The token whose bytes are exactly `text` (token_bytes(id) == text),
  // special tokens first: find_token("<|im_end|>").
  std::optional<TokenId> find_token(std::string_view text) const;
  bool is_special(TokenId id) const;  // control or user-defined token

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Turns a stream of token ids into text without ever splitting a UTF-8
// character: bytes of an incomplete character wait for the next token.
// Everything push() and finish() return, concatenated, is decode(ids).
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer);
  std::string push(TokenId id);  // text now complete (possibly empty)
  std::string finish();          // whatever is left, invalid bytes included
 private:
  const Tokenizer* tokenizer_;
  std::string pending_;
  bool first_ = true;  // the first token decodes as decode() would (SentencePiece's leading space)
};

}  // namespace kvframe::runtime
