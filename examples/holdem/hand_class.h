// A hand's class in words, as a player would say it: what the seat's own
// read (seat_read.h) tells the LLM bot, so a small model need not work out
// hand strength from card strings.
//
// Preflop, the first that fits, high card first in every name:
//   "pocket queens"                      a pair
//   "ace-king suited", "king-ten offsuit" both cards ten or higher
//   "ace with a small kicker, suited"    an ace and a card below ten (", offsuit")
//   "suited connectors", "offsuit connectors"  adjacent ranks (T9, 54)
//   "suited one-gapper"                  one rank between (J9s, 53s)
//   "suited junk", "offsuit junk"        anything else
//
// Postflop, the made hand and then any draws, ", " between:
//   straight or better  hand_eval's describe(): "flush, ace high", "full
//                       house, sevens full of kings"; ", on the board" when
//                       the five board cards alone are as good
//   "set of sevens"     a pocket pair and one board card of its rank
//   "trips, sevens"     one hole card and a pair on the board
//   "two pair, kings and nines"  each hole card pairs a board card
//   "overpair, queens"  a pocket pair above every board card;
//   "underpair, sevens" one below the board's top card
//   "top pair, king kicker"  a hole card pairs the highest board rank (the
//                       other hole card is the kicker); "middle pair,
//                       sevens", "bottom pair, twos" for lower board ranks
//   "nothing"           no pair of the hole cards' own (a pair on the board
//                       is everyone's)
//   draws, flop and turn only: "flush draw" (four of a suit, a hole card
//   among them), "open-ended straight draw" (two or more ranks complete a
//   straight the hole cards are part of: both ends or a double gutshot),
//   "gutshot" (one rank does). Alone when the made hand is "nothing":
//   "flush draw, gutshot"; else after it: "top pair, king kicker, flush draw".
#pragma once

#include <array>
#include <string>
#include <vector>

#include "holdem/cards.h"

namespace kvframe::examples::holdem {

// The starting hand's class (the preflop list above).
std::string starting_hand_class(Card a, Card b);

// The class of `hole` with `board` (0, 3, 4 or 5 cards; preflop when empty).
// Throws std::invalid_argument on another board size or a repeated card.
std::string hand_class(const std::array<Card, 2>& hole, const std::vector<Card>& board);

}  // namespace kvframe::examples::holdem
