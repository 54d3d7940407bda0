#include "sentencepiece.h"

#include <queue>

#include "utf8.h"

namespace kvframe::runtime {
std::optional<uint8_t> byte_token_value(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = 3; i < 5; ++i) {
    const char c = text[i];
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    value = value * 16 + digit;
  }
  return static_cast<uint8_t>(value);
}

Result<SentencePieceEncoder> SentencePieceEncoder::create(const Vocab& vocab, bool add_space_prefix) {
  if (vocab.scores.empty()) {
    return Error{ErrorCode::kMissingKey,
                 "tokenizer.ggml.scores is missing; a SentencePiece (\"llama\") vocabulary needs the merge scores"};
  }
  SentencePieceEncoder spm;
  spm.add_space_prefix_ = add_space_prefix;
  for (TokenId id = 0; id < vocab.size(); ++id) {
    const auto i = static_cast<std::size_t>(id);
    const TokenType type = vocab.types[i];
    // sentencepiece merges into normal, user-defined and unused pieces; never
    // into control, unknown or byte pieces ("<s>" in text stays characters).
    if (type == TokenType::kNormal || type == TokenType::kUserDefined || type == TokenType::kUnused) {
      spm.pieces_.emplace(vocab.texts[i], Piece{id, vocab.scores[i], type == TokenType::kUnused});
    } else if (type == TokenType::kByte) {
      if (const std::optional<uint8_t> b = byte_token_value(vocab.texts[i]); b && !spm.byte_tokens_[*b]) {
        spm.byte_tokens_[*b] = id;
      }
    } else if (type == TokenType::kUnknown && !spm.unknown_) {
      spm.unknown_ = id;
    }
  }
  if (vocab.unknown) spm.unknown_ = vocab.unknown;
  spm.has_all_bytes_ = true;
  for (const auto& b : spm.byte_tokens_) spm.has_all_bytes_ = spm.has_all_bytes_ && b.has_value();
  if (!spm.has_all_bytes_ && !spm.unknown_) {
    return Error{ErrorCode::kTokenizer,
                 "SentencePiece vocabulary has neither all 256 <0xNN> byte tokens nor an unknown token: "
                 "characters outside it could not be encoded"};
  }
  return spm;
}

void SentencePieceEncoder::encode(std::string_view text, bool at_text_start, std::vector<TokenId>& out) const {
  std::string s;
  s.reserve(text.size() + kSpaceSymbol.size());
  if (add_space_prefix_ && at_text_start) s += kSpaceSymbol;
  for (const char c : text) {
    if (c == ' ') {
      s += kSpaceSymbol;
    } else {
      s += c;
    }
  }
  if (s.empty()) return;

  std::vector<Symbol> symbols;
  for (std::size_t pos = 0; pos < s.size();) {
    const std::size_t length = utf8::sequence_length(s, pos);
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back({pos, length, index - 1, pos + length < s.size() ? index + 1 : -1});
    pos += length;
  }

  struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    std::size_t length;  // of the merged piece: a symbol that changed since makes it stale
  };
  const auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> agenda(worse);
  ReverseMerges reverse;
  std::string piece;
  const auto consider = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<std::size_t>(left)];
    const Symbol& r = symbols[static_cast<std::size_t>(right)];
    piece.assign(s, l.start, l.length + r.length);
    const auto it = pieces_.find(piece);
    if (it == pieces_.end()) return;
    agenda.push({it->second.score, left, right, piece.size()});
    if (it->second.unused) {
      reverse[piece] = {s.substr(l.start, l.length), s.substr(r.start, r.length)};
    }
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) consider(i, i + 1);

  while (!agenda.empty()) {
    const Candidate best = agenda.top();
    agenda.pop();
    Symbol& l = symbols[static_cast<std::size_t>(best.left)];
    Symbol& r = symbols[static_cast<std::size_t>(best.right)];
    if (l.length == 0 || r.length == 0 || l.length + r.length != best.length) continue;
    l.length += r.length;
    r.length = 0;
    l.next = r.next;
    if (l.next >= 0) symbols[static_cast<std::size_t>(l.next)].prev = best.left;
    consider(l.prev, best.left);
    consider(best.left, l.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[static_cast<std::size_t>(i)].next) {
    const Symbol& sym = symbols[static_cast<std::size_t>(i)];
    emit(s.substr(sym.start, sym.length), reverse, out);
  }
}

void SentencePieceEncoder::emit(const std::string& piece, const ReverseMerges& reverse,
                                std::vector<TokenId>& out) const {
  if (const auto it = pieces_.find(piece); it != pieces_.end() && !it->second.unused) {
    out.push_back(it->second.id);
    return;
  }
  if (const auto it = reverse.find(piece); it != reverse.end()) {
    emit(it->second.first, reverse, out);
    emit(it->second.second, reverse, out);
    return;
  }
  if (has_all_bytes_) {
    for (const char c : piece) out.push_back(*byte_tokens_[static_cast<uint8_t>(c)]);
  } else {
    out.push_back(*unknown_);
  }
}

}  // namespace kvframe::runtime
