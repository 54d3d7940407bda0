// Byte-level BPE, tokenizer.ggml.model "gpt2" (internal): GPT-2, SmolLM2,
// Llama 3, Qwen2. Each pre-tokenizer piece starts as one symbol per byte and
// the adjacent pair with the best (lowest) merge rank is merged, leftmost
// first among equals, until no pair has a rank: Hugging Face's BPE model
// exactly (tokenizers/src/models/bpe/word.rs), on token ids instead of strings.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pre_tokenizer.h"
#include "vocab.h"

namespace kvframe::runtime {

class BytePairEncoder {
 public:
  // `token_bytes` holds what each token stands for (its byte-level text
  // mapped back to bytes).
  static BytePairEncoder create(const Vocab& vocab, const std::vector<std::string>& token_bytes,
                                        const std::vector<std::string>& merges, PreTokenizer pre);

  void encode(std::string_view text, std::vector<TokenId>& out) const;

 private:
  struct Merge {
    uint32_t rank;
    TokenId result;
  };
  struct Scratch;
  explicit BytePairEncoder(PreTokenizer pre) : pre_(std::move(pre)) {}
  void encode_piece(std::string_view piece, Scratch& scratch, std::vector<TokenId>& out) const;
  static uint64_t pair_key(TokenId left, TokenId right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  PreTokenizer pre_;
  std::array<TokenId, 256> byte_token_{};  // -1: the byte has no token
  std::unordered_map<uint64_t, Merge> merges_;         // (left, right) -> rank and merged token
  std::unordered_map<std::string, TokenId> whole_;     // ignore_merges only: token bytes -> id
};

}  // namespace kvframe::runtime
