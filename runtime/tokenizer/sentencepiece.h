// SentencePiece-style BPE, tokenizer.ggml.model "llama" (internal): Llama 2,
// Mistral, TinyLlama. Spaces become "▁" (U+2581), the text starts as one
// symbol per character and the adjacent pair whose concatenation is the
// vocabulary piece with the highest score is merged, leftmost first among
// equals, until no concatenation is a piece. Characters left outside the
// vocabulary become <0xNN> byte tokens, or the unknown token when the
// vocabulary has no byte tokens. This is sentencepiece's bpe_model.cc
// (and llama.cpp's llm_tokenizer_spm), including its handling of unused
// pieces: formed by merges, then split back into the pieces they came from.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vocab.h"

namespace kvframe::runtime {

// "▁", which stands for a space in SentencePiece vocabularies.
inline constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";

// The byte a byte-fallback token stands for: "<0x0A>" -> 0x0A.
std::optional<uint8_t> byte_token_value(std::string_view text);

class SentencePieceEncoder {
 public:
  // Needs tokenizer.ggml.scores (kMissingKey) and either all 256 byte tokens
  // or an unknown token (kTokenizer): otherwise some text has no encoding.
  static Result<SentencePieceEncoder> create(const Vocab& vocab, bool add_space_prefix);

  // at_text_start: this stretch opens the text, the only place the dummy
  // "▁" of add_space_prefix goes (as sentencepiece and HF's Metaspace with
  // prepend_scheme "first"; not after every special token, as llama.cpp
  // does, which would break decode(encode(s)) == s).
  void encode(std::string_view text, bool at_text_start, std::vector<TokenId>& out) const;

 private:
  struct Piece {
    TokenId id;
    float score;
    bool unused;
  };
  struct Symbol {
    std::size_t start;
    std::size_t length;  // 0 once merged into its left neighbour
    int32_t prev;
    int32_t next;
  };
  using ReverseMerges = std::unordered_map<std::string, std::pair<std::string, std::string>>;

  SentencePieceEncoder() = default;
  void emit(const std::string& piece, const ReverseMerges& reverse, std::vector<TokenId>& out) const;

  std::unordered_map<std::string, Piece> pieces_;  // what merges may form
  std::array<std::optional<TokenId>, 256> byte_tokens_{};
  bool has_all_bytes_ = false;
  std::optional<TokenId> unknown_;
  bool add_space_prefix_ = true;
};

}  // namespace kvframe::runtime
