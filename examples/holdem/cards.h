// Cards and decks for the Hold'em example.
//
// A card is one byte, 0..51: rank * 4 + suit, rank 0 = deuce .. 12 = ace,
// suit 0..3 = clubs, diamonds, hearts, spades. Text is two characters, rank
// then suit: "Ah", "Tc", "2d" — the form the gamecore JSON uses (Figure 5).
#pragma once

#include <array>
#include <cstddef>
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
// Ranks as rank_of() gives them, 0 the deuce.
constexpr int kJack = 9, kQueen = 10, kKing = 11, kAce = 12;

constexpr Card make_card(int rank, int suit) { return static_cast<Card>(rank * kSuits + suit); }
constexpr int rank_of(Card card) { return card / kSuits; }
constexpr int suit_of(Card card) { return card % kSuits; }

// "Ah"; rank characters 23456789TJQKA, suits cdhs. "??" for a value over 51.
std::string card_name(Card card);
// The card named by "Ah" (case of the rank letter ignored), nullopt otherwise.
std::optional<Card> parse_card(std::string_view text);
// Names of several cards: ["Ah","7c"] as {"Ah","7c"}.
std::vector<std::string> card_names(const std::vector<Card>& cards);

// The cards of a real deal, marked by index: two hole cards, a board of 0,
// 3, 4 or 5 cards and any `dead` (known folded) cards. Throws
// std::invalid_argument, its message led by `who`, for a board of another
// size or a card invalid or repeated.
std::array<bool, kCards> dealt_cards(const char* who, const std::array<Card, 2>& hole, const std::vector<Card>& board,
                                     const std::vector<Card>& dead = {});

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
  // Every card in dealing order, dealt or not: what a replay needs.
  const std::vector<Card>& order() const { return cards_; }
  std::size_t remaining() const { return cards_.size() - next_; }

 private:
  std::vector<Card> cards_;
  std::size_t next_ = 0;
};

namespace detail {
template <std::size_t I, std::size_t K, class Visit>
void fill_hand(std::array<Card, K>& hand, int first, Visit& visit) {
  for (int card = first; card <= kCards - static_cast<int>(K - I); ++card) {
    hand[I] = static_cast<Card>(card);
    if constexpr (I + 1 == K) {
      visit(static_cast<const Card*>(hand.data()));
    } else {
      fill_hand<I + 1, K>(hand, card + 1, visit);
    }
  }
}
}  // namespace detail

// Calls visit(const Card* cards) for every K-card hand of the deck, cards in
// ascending order, hands in lexicographic order: C(52, K) calls (2,598,960
// for 5, 133,784,560 for 7). The loops are unrolled at compile time: as fast
// as K nested loops written out.
template <std::size_t K, class Visit>
void for_each_hand(Visit&& visit) {
  std::array<Card, K> hand{};
  detail::fill_hand<0, K>(hand, 0, visit);
}

}  // namespace kvframe::examples::holdem
