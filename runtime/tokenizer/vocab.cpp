#include "vocab.h"

#include <limits>

namespace kvframe::runtime {
namespace {

Error tokenizer_error(std::string message) { return Error{ErrorCode::kTokenizer, std::move(message)}; }

// An optional token id key: absent is fine, present must name a token.
Result<std::optional<TokenId>> read_token_id(const GgufFile& file, const char* key, int32_t n_vocab) {
  if (file.find(key) == nullptr) return std::optional<TokenId>{};
  Result<int64_t> id = file.get_int(key);
  if (!id) return id.error();
  if (*id < 0 || *id >= n_vocab) {
    return tokenizer_error(std::string(key) + " is " + std::to_string(*id) + " but the vocabulary has " +
                           std::to_string(n_vocab) + " tokens; the file is inconsistent, re-convert it");
  }
  return std::optional<TokenId>{static_cast<TokenId>(*id)};
}

}  // namespace

Result<Vocab> read_vocab(const GgufFile& file) {
  Vocab vocab;
  {
    Result<std::vector<std::string>> tokens = file.get_string_array("tokenizer.ggml.tokens");
    if (!tokens) return tokens.error();
    vocab.texts = std::move(*tokens);
  }
  if (vocab.texts.empty()) return tokenizer_error("tokenizer.ggml.tokens is empty");
  const std::size_t n = vocab.texts.size();
  if (n > static_cast<std::size_t>(std::numeric_limits<int32_t>::max())) return tokenizer_error("tokenizer.ggml.tokens has more than 2^31 tokens");

  vocab.types.assign(n, TokenType::kNormal);
  if (file.find("tokenizer.ggml.token_type") != nullptr) {
    Result<std::vector<int64_t>> types = file.get_int_array("tokenizer.ggml.token_type");
    if (!types) return types.error();
    if (types->size() != n) {
      return tokenizer_error("tokenizer.ggml.token_type has " + std::to_string(types->size()) +
                             " entries for " + std::to_string(n) + " tokens");
    }
    for (std::size_t i = 0; i < n; ++i) {
      const int64_t t = (*types)[i];
      if (t < static_cast<int64_t>(TokenType::kNormal) || t > static_cast<int64_t>(TokenType::kByte)) {
        return tokenizer_error("tokenizer.ggml.token_type of token " + std::to_string(i) + " is " +
                               std::to_string(t) + "; expected 1 (normal) .. 6 (byte)");
      }
      vocab.types[i] = static_cast<TokenType>(t);
    }
  }

  if (file.find("tokenizer.ggml.scores") != nullptr) {
    Result<std::vector<double>> scores = file.get_float_array("tokenizer.ggml.scores");
    if (!scores) return scores.error();
    if (scores->size() != n) {
      return tokenizer_error("tokenizer.ggml.scores has " + std::to_string(scores->size()) + " entries for " +
                             std::to_string(n) + " tokens");
    }
    // The file stores f32: narrowing back is exact.
    vocab.scores.resize(n);
    for (std::size_t i = 0; i < n; ++i) vocab.scores[i] = static_cast<float>((*scores)[i]);
  }

  const auto n_vocab = static_cast<int32_t>(n);
  Result<std::optional<TokenId>> bos = read_token_id(file, "tokenizer.ggml.bos_token_id", n_vocab);
  if (!bos) return bos.error();
  Result<std::optional<TokenId>> eos = read_token_id(file, "tokenizer.ggml.eos_token_id", n_vocab);
  if (!eos) return eos.error();
  Result<std::optional<TokenId>> unknown = read_token_id(file, "tokenizer.ggml.unknown_token_id", n_vocab);
  if (!unknown) return unknown.error();
  vocab.bos = *bos;
  vocab.eos = *eos;
  vocab.unknown = *unknown;
  if (file.find("tokenizer.ggml.add_bos_token")) {
    auto add_bos = file.get_bool("tokenizer.ggml.add_bos_token");
    if (!add_bos) return add_bos.error();
    vocab.add_bos = *add_bos && vocab.bos.has_value();
  }
  return vocab;
}

}  // namespace kvframe::runtime
