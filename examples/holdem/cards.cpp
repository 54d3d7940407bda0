#include "holdem/cards.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace kvframe::examples::holdem {
namespace {

constexpr std::string_view kRankChars = "23456789TJQKA";
constexpr std::string_view kSuitChars = "cdhs";

bool valid_card(Card card) { return card < kCards; }

// Index of `c` in `chars`, or -1.
int index_in(std::string_view chars, char c) {
  const std::size_t at = chars.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

char upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

// Throws on a card outside 0..51 or one listed twice: a deck like that would
// deal impossible hands far from the mistake that built it.
void check_deck(const std::vector<Card>& cards) {
  std::array<bool, kCards> seen{};
  for (Card card : cards) {
    if (!valid_card(card)) throw std::invalid_argument("holdem: deck holds invalid card " + std::to_string(card));
    if (seen[card]) throw std::invalid_argument("holdem: deck holds " + card_name(card) + " twice");
    seen[card] = true;
  }
}

}  // namespace

std::string card_name(Card card) {
  if (!valid_card(card)) return "??";
  return {kRankChars[static_cast<std::size_t>(rank_of(card))], kSuitChars[static_cast<std::size_t>(suit_of(card))]};
}

std::optional<Card> parse_card(std::string_view text) {
  if (text.size() != 2) return std::nullopt;
  const int rank = index_in(kRankChars, upper(text[0]));
  const int suit = index_in(kSuitChars, text[1]);
  if (rank < 0 || suit < 0) return std::nullopt;
  return make_card(rank, suit);
}

std::vector<std::string> card_names(const std::vector<Card>& cards) {
  std::vector<std::string> names;
  names.reserve(cards.size());
  for (Card card : cards) names.push_back(card_name(card));
  return names;
}

Deck::Deck(DeterministicRng& rng) {
  cards_.reserve(kCards);
  for (int card = 0; card < kCards; ++card) cards_.push_back(static_cast<Card>(card));
  rng.shuffle(cards_);
}

Deck::Deck(std::vector<Card> order) : cards_(std::move(order)) { check_deck(cards_); }

Card Deck::deal() {
  if (next_ == cards_.size()) throw std::out_of_range("holdem: deal from an empty deck");
  return cards_[next_++];
}

std::array<bool, kCards> dealt_cards(const char* who, const std::array<Card, 2>& hole, const std::vector<Card>& board,
                                     const std::vector<Card>& dead) {
  const std::size_t n = board.size();
  if (n != 0 && n != 3 && n != 4 && n != 5) {
    throw std::invalid_argument(std::string(who) + ": the board holds 0, 3, 4 or 5 cards, not " + std::to_string(n));
  }
  std::array<bool, kCards> known{};
  const auto mark = [&known, who](Card card) {
    if (card >= kCards) throw std::invalid_argument(std::string(who) + ": invalid card " + std::to_string(card));
    if (known[card]) throw std::invalid_argument(std::string(who) + ": " + card_name(card) + " appears twice");
    known[card] = true;
  };
  for (Card card : hole) mark(card);
  for (Card card : board) mark(card);
  for (Card card : dead) mark(card);
  return known;
}

}  // namespace kvframe::examples::holdem
