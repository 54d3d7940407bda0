// Cards and decks for the Hold'em example.
//
// A card is one byte, 0..51: rank * 4 + suit, rank 0 = deuce .. 12 = ace,
// suit 0..3 = clubs, diamonds, hearts, spades. Text is two characters, rank
// then suit: "Ah", "Tc", "2d" — the form the gamecore JSON uses (Figure 5).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/deterministic_rng.h"

namespace kvframe::examples::holdem {

using Card = std::uint8_t;

constexpr int kRanks = 13;
constexpr int kSuits = 4;
constexpr int kCards = 52;

constexpr Card make_card(int rank, int suit) { return static_cast<Card>(rank * kSuits + suit); }
constexpr int rank_of(Card card) { return card / kSuits; }
constexpr int suit_of(Card card) { return card % kSuits; }

// "Ah"; rank characters 23456789TJQKA, suits cdhs. "??" for a value over 51.
std::string card_name(Card card);
// The card named by "Ah" (case of the rank letter ignored), nullopt otherwise.
std::optional<Card> parse_card(std::string_view text);
// Names of several cards: ["Ah","7c"] as {"Ah","7c"}.
std::vector<std::string> card_names(const std::vector<Card>& cards);

// A shuffled deck dealt from the top. The same rng state deals the same cards
// on every platform (DeterministicRng's own Fisher-Yates).
class Deck {
 public:
  explicit Deck(DeterministicRng& rng);
  // A deck in a given order, first card dealt first (tests, replays); it may
  // hold fewer than 52 cards. Throws std::invalid_argument on a card over 51
  // or a card listed twice.
  explicit Deck(std::vector<Card> order);
  Card deal();  // throws std::out_of_range when empty
  std::size_t remaining() const { return cards_.size() - next_; }

 private:
  std::vector<Card> cards_;
  std::size_t next_ = 0;
};

}  // namespace kvframe::examples::holdem
