#include "special_tokens.h"

#include <algorithm>

namespace kvframe::runtime {

SpecialTokenMatcher::SpecialTokenMatcher(const Vocab& vocab) {
  for (TokenId id = 0; id < vocab.size(); ++id) {
    const std::string& text = vocab.texts[static_cast<std::size_t>(id)];
    const TokenType type = vocab.types[static_cast<std::size_t>(id)];
    // The unknown token ("<unk>") is one of HF's special added tokens too.
    const bool control = type == TokenType::kControl || type == TokenType::kUnknown;
    if ((!control && type != TokenType::kUserDefined) || text.empty()) continue;
    by_first_byte_[static_cast<uint8_t>(text[0])].push_back({text, id, control});
  }
  for (auto& candidates : by_first_byte_) {
    // Longest first; among equal texts the lower id, as HF keeps the first
    // added token of a given content.
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.text.size() > b.text.size(); });
  }
}

std::optional<Fragment> SpecialTokenMatcher::match_at(std::string_view text, std::size_t pos,
                                                      bool parse_special) const {
  for (const Candidate& c : by_first_byte_[static_cast<uint8_t>(text[pos])]) {
    if (c.control && !parse_special) continue;
    if (text.compare(pos, c.text.size(), c.text) == 0) return Fragment{text.substr(pos, c.text.size()), c.id};
  }
  return std::nullopt;
}

std::vector<Fragment> SpecialTokenMatcher::split(std::string_view text, bool parse_special) const {
  std::vector<Fragment> fragments;
  std::size_t plain_start = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::optional<Fragment> special = match_at(text, pos, parse_special);
    if (!special) {
      ++pos;
      continue;
    }
    if (pos > plain_start) fragments.push_back({text.substr(plain_start, pos - plain_start), std::nullopt});
    fragments.push_back(*special);
    pos += special->text.size();
    plain_start = pos;
  }
  if (plain_start < text.size()) fragments.push_back({text.substr(plain_start), std::nullopt});
  return fragments;
}

}  // namespace kvframe::runtime
