#include "tiny_vocab.h"

#include <gtest/gtest.h>

#include "gguf_writer.h"

namespace kvframe::test {

using runtime::TokenId;

TokenId TinyVocab::add(std::string text, int32_t type, float score) {
  tokens.push_back(std::move(text));
  types.push_back(type);
  if (!scores.empty() || score != 0.0f) {
    scores.resize(tokens.size() - 1, 0.0f);
    scores.push_back(score);
  }
  return static_cast<TokenId>(tokens.size() - 1);
}

TokenId TinyVocab::add_merge(std::string_view left, std::string_view right) {
  merges.push_back(byte_level_text(left) + " " + byte_level_text(right));
  const std::string merged = byte_level_text(std::string(left) + std::string(right));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == merged) return static_cast<TokenId>(i);
  }
  return add(merged);
}

std::vector<uint8_t> TinyVocab::bytes() const {
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", model);
  if (pre) w.add_string("tokenizer.ggml.pre", *pre);
  w.add_string_array("tokenizer.ggml.tokens", tokens);
  if (write_types) w.add_i32_array("tokenizer.ggml.token_type", types);
  if (!scores.empty()) {
    std::vector<float> all = scores;
    all.resize(tokens.size(), 0.0f);
    w.add_f32_array("tokenizer.ggml.scores", all);
  }
  if (model == "gpt2") w.add_string_array("tokenizer.ggml.merges", merges);
  if (bos) w.add_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(*bos));
  if (eos) w.add_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(*eos));
  if (unknown) w.add_u32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(*unknown));
  if (add_space_prefix) w.add_bool("tokenizer.ggml.add_space_prefix", *add_space_prefix);
  if (add_bos_token) w.add_bool("tokenizer.ggml.add_bos_token", *add_bos_token);
  if (chat_template) w.add_string("tokenizer.chat_template", *chat_template);
  return w.bytes();
}

TinyVocab byte_level_vocab() {
  TinyVocab v;
  for (int b = 0; b < 256; ++b) v.add(byte_level_text(std::string(1, static_cast<char>(b))));
  return v;
}

Result<runtime::GgufFile> parse(const TinyVocab& vocab) {
  const std::vector<uint8_t> data = vocab.bytes();
  return runtime::GgufFile::parse(data.data(), data.size());
}

Result<runtime::Tokenizer> load_tokenizer(const TinyVocab& vocab) {
  Result<runtime::GgufFile> file = parse(vocab);
  if (!file) return file.error();
  return runtime::Tokenizer::from_gguf(*file);
}

runtime::Tokenizer load_tokenizer_or_fail(const TinyVocab& vocab) {
  Result<runtime::Tokenizer> tokenizer = load_tokenizer(vocab);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.error().to_string();
  return std::move(tokenizer).value();
}

}  // namespace kvframe::test
