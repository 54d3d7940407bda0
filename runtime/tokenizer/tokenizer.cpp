#include "kvframe/runtime_tokenizer/tokenizer.h"

#include <unordered_map>

#include "byte_pair.h"
#include "byte_unicode.h"
#include "sentencepiece.h"
#include "special_tokens.h"
#include "vocab.h"

namespace kvframe::runtime {
namespace {

// What each token stands for, as bytes. Special tokens are their text; byte-
// level tokens map back through GPT-2's table (a token holding a character
// outside it, which no converter writes, keeps its text); SentencePiece
// pieces turn "▁" into spaces and <0xNN> into the byte.
std::vector<std::string> token_bytes_of(const Vocab& vocab, Tokenizer::Model model) {
  std::vector<std::string> bytes(vocab.texts.size());
  for (std::size_t i = 0; i < vocab.texts.size(); ++i) {
    const std::string& text = vocab.texts[i];
    const TokenType type = vocab.types[i];
    std::string& out = bytes[i];
    if (type == TokenType::kControl || type == TokenType::kUserDefined || type == TokenType::kUnknown) {
      out = text;
    } else if (model == Tokenizer::Model::kBytePairGpt2) {
      if (!byte_unicode::append_bytes(text, out)) out = text;
    } else if (const std::optional<uint8_t> byte = byte_token_value(text); type == TokenType::kByte && byte) {
      out = static_cast<char>(*byte);
    } else {
      for (std::size_t pos = 0; pos < text.size();) {
        if (text.compare(pos, kSpaceSymbol.size(), kSpaceSymbol) == 0) {
          out += ' ';
          pos += kSpaceSymbol.size();
        } else {
          out += text[pos++];
        }
      }
    }
  }
  return bytes;
}

// Lookup for find_token: special tokens first, then ordinary pieces, then
// byte and unknown tokens, so text shared by several tokens finds the one a
// caller means ("<|im_end|>" the control token, " " the "▁" piece).
std::unordered_map<std::string, TokenId> index_by_bytes(const Vocab& vocab, const std::vector<std::string>& bytes) {
  std::unordered_map<std::string, TokenId> index;
  index.reserve(bytes.size());
  const auto rank = [&](TokenId id) {
    switch (vocab.types[static_cast<std::size_t>(id)]) {
      case TokenType::kControl:
      case TokenType::kUserDefined: return 0;
      case TokenType::kNormal:
      case TokenType::kUnused: return 1;
      case TokenType::kByte:
      case TokenType::kUnknown: return 2;
    }
    return 2;
  };
  for (int pass = 0; pass < 3; ++pass) {
    for (TokenId id = 0; id < vocab.size(); ++id) {
      if (rank(id) == pass) index.emplace(bytes[static_cast<std::size_t>(id)], id);
    }
  }
  return index;
}

bool in_range(const Vocab& vocab, TokenId id) { return id >= 0 && id < vocab.size(); }

}  // namespace

struct Tokenizer::Impl {
  Model model;
  Vocab vocab;
  std::vector<std::string> token_bytes;
  std::unordered_map<std::string, TokenId> by_bytes;
  SpecialTokenMatcher specials;
  std::optional<BytePairEncoder> bpe;
  std::optional<SentencePieceEncoder> spm;
  bool add_space_prefix = false;  // SentencePiece only

  Impl(Model m, Vocab v)
      : model(m),
        vocab(std::move(v)),
        token_bytes(token_bytes_of(vocab, m)),
        by_bytes(index_by_bytes(vocab, token_bytes)),
        specials(vocab) {}

  Status init_byte_pair(const GgufFile& file) {
    Result<std::string> pre_name = file.get_string("tokenizer.ggml.pre");
    if (!pre_name) return pre_name.error();
    Result<PreTokenizer> pre = PreTokenizer::create(*pre_name);
    if (!pre) return pre.error();
    Result<std::vector<std::string>> merges = file.get_string_array("tokenizer.ggml.merges");
    if (!merges) return merges.error();
    bpe.emplace(BytePairEncoder::create(vocab, token_bytes, *merges, std::move(*pre)));
    return {};
  }

  Status init_sentencepiece(const GgufFile& file) {
    // llama.cpp's default for SentencePiece vocabularies is to add the prefix.
    add_space_prefix = true;
    if (file.find("tokenizer.ggml.add_space_prefix") != nullptr) {
      Result<bool> value = file.get_bool("tokenizer.ggml.add_space_prefix");
      if (!value) return value.error();
      add_space_prefix = *value;
    }
    Result<SentencePieceEncoder> encoder = SentencePieceEncoder::create(vocab, add_space_prefix);
    if (!encoder) return encoder.error();
    spm.emplace(std::move(*encoder));
    return {};
  }
};

Result<Tokenizer> Tokenizer::from_gguf(const GgufFile& file) {
  Result<std::string> model_name = file.get_string("tokenizer.ggml.model");
  if (!model_name) return model_name.error();
  Model model;
  if (*model_name == "gpt2") {
    model = Model::kBytePairGpt2;
  } else if (*model_name == "llama") {
    model = Model::kSentencePieceLlama;
  } else {
    return Error{ErrorCode::kTokenizer, "tokenizer.ggml.model is \"" + *model_name +
                                            "\", a tokenizer kvframe does not implement (supported: gpt2, llama)"};
  }
  Result<Vocab> vocab = read_vocab(file);
  if (!vocab) return vocab.error();
  auto impl = std::make_unique<Impl>(model, std::move(*vocab));
  const Status status = model == Model::kBytePairGpt2 ? impl->init_byte_pair(file) : impl->init_sentencepiece(file);
  if (!status.ok()) return status.error();
  return Tokenizer(std::move(impl));
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 2);
  if (add_bos && impl_->vocab.bos) ids.push_back(*impl_->vocab.bos);
  for (const Fragment& fragment : impl_->specials.split(text, parse_special)) {
    if (fragment.token) {
      ids.push_back(*fragment.token);
    } else if (impl_->bpe) {
      impl_->bpe->encode(fragment.text, ids);
    } else {
      impl_->spm->encode(fragment.text, fragment.text.data() == text.data(), ids);
    }
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids) const {
  std::string text;
  for (const TokenId id : ids) {
    if (in_range(impl_->vocab, id)) text += impl_->token_bytes[static_cast<std::size_t>(id)];
  }
  // SentencePiece: the space add_space_prefix put before the text is not
  // part of it. Like HF's Metaspace decoder, only a leading ordinary piece
  // loses it: after a bos token the space stays ("<s> Hello").
  if (impl_->add_space_prefix && !ids.empty() && in_range(impl_->vocab, ids[0]) &&
      impl_->vocab.types[static_cast<std::size_t>(ids[0])] == TokenType::kNormal && !text.empty() &&
      text[0] == ' ') {
    text.erase(0, 1);
  }
  return text;
}

std::string Tokenizer::token_bytes(TokenId id) const {
  if (!in_range(impl_->vocab, id)) return {};
  return impl_->token_bytes[static_cast<std::size_t>(id)];
}

Tokenizer::Model Tokenizer::model() const { return impl_->model; }
int32_t Tokenizer::n_vocab() const { return impl_->vocab.size(); }
std::optional<TokenId> Tokenizer::bos_id() const { return impl_->vocab.bos; }
bool Tokenizer::add_bos_by_default() const { return impl_->vocab.add_bos; }
std::optional<TokenId> Tokenizer::eos_id() const { return impl_->vocab.eos; }

std::optional<TokenId> Tokenizer::find_token(std::string_view text) const {
  if (text.empty()) return std::nullopt;
  const auto it = impl_->by_bytes.find(std::string(text));
  if (it == impl_->by_bytes.end()) return std::nullopt;
  return it->second;
}

bool Tokenizer::is_special(TokenId id) const { return in_range(impl_->vocab, id) && impl_->vocab.is_special(id); }

}  // namespace kvframe::runtime
