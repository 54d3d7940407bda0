// Finds special tokens in text before BPE runs (internal), as Hugging Face
// `tokenizers` does with its added tokens: scanning left to right, the
// leftmost occurrence wins and, among tokens starting there, the longest
// ("<|im_start|>" over a hypothetical "<|im"). Control tokens (and the
// unknown token) are matched only when the caller asks for it
// (parse_special); user-defined tokens always, like HF's non-special added
// tokens and SentencePiece's user symbols.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vocab.h"

namespace kvframe::runtime {

// A stretch of the input: either plain text for the BPE, or one special token.
struct Fragment {
  std::string_view text;
  std::optional<TokenId> token;
};

class SpecialTokenMatcher {
 public:
  explicit SpecialTokenMatcher(const Vocab& vocab);

  // Splits text into plain stretches and special tokens, in order. Plain
  // stretches are never empty.
  std::vector<Fragment> split(std::string_view text, bool parse_special) const;

 private:
  struct Candidate {
    std::string text;
    TokenId id;
    bool control;
  };
  std::optional<Fragment> match_at(std::string_view text, std::size_t pos, bool parse_special) const;

  // Candidates by first byte, longest first.
  std::array<std::vector<Candidate>, 256> by_first_byte_;
};

}  // namespace kvframe::runtime
