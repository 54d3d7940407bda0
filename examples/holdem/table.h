// The rules engine: one hand of No-Limit Texas Hold'em for 2..9 seats.
//
//   Hand hand(config, /*button=*/0, stacks, Deck(rng));   // posts blinds, deals
//   while (!hand.over()) {
//     LegalActions legal = hand.legal();
//     hand.apply(choose(hand.to_act(), legal));           // throws on illegal
//   }
//   hand.result().net[seat];                               // chips won or lost
//
// Rules (the common cardroom rules, as in Robert's Rules of Poker):
// - Blinds: the seat after the button posts the small blind and the next the
//   big blind; heads-up (two seats in hand, the button one of them), the
//   button posts the small blind and acts first preflop, last after. A
//   stack shorter than its blind posts it all in; the others still call the
//   full big blind (the excess goes back).
// - Deal: hole cards one at a time starting left of the button, twice round,
//   then three, one and one board cards. No burn cards: the deck's order
//   alone decides the deal.
// - Betting: fold, check (nothing to call), call (all in for less when
//   short), raise. Amounts are "raise to": the seat's total bet this street
//   after the action. A bet on a street with no bet is a raise from 0.
//   Folding is legal even when checking is. No raise once every other seat
//   is all in, folded, or too short to cover the current bet: nobody could
//   answer it.
// - Minimum raise: to the current bet plus the largest raise so far this
//   street (at least the big blind). An all-in below it is allowed but is
//   not a full raise: players who already acted may then only call or fold,
//   unless what they face since they acted adds up to a full raise (a later
//   full raise, or several short all-ins together: TDA Rule 47).
// - A round ends when every seat still able to act has acted since the last
//   full raise and matched the bet; with at most one seat able to act and the
//   bets matched, the remaining board is dealt out without betting.
// - Pots: each level of all-in commitment makes a side pot; chips nobody
//   else matched go back to their owner. At showdown each pot goes to the
//   best hand among the seats in it; a tie splits it, odd chips going to the
//   winners nearest the button's left (clockwise).
// - A seat with an empty stack at the start sits the hand out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "holdem/cards.h"
#include "holdem/hand_eval.h"

namespace kvframe::examples::holdem {

constexpr int kMinSeats = 2;
constexpr int kMaxSeats = 9;

struct TableConfig {
  int seats = 6;  // kMinSeats..kMaxSeats
  std::int64_t small_blind = 5;
  std::int64_t big_blind = 10;
};

enum class Street : std::uint8_t { kPreflop, kFlop, kTurn, kRiver };
const char* street_name(Street street);  // "preflop", "flop", "turn", "river"

enum class ActionKind : std::uint8_t { kFold, kCheck, kCall, kRaise, kSmallBlind, kBigBlind };
// "fold", "check", "call", "raise", "small_blind", "big_blind".
const char* action_name(ActionKind kind);

struct Action {
  ActionKind kind = ActionKind::kFold;
  std::int64_t amount = 0;  // kRaise: the total bet this street after it ("raise to"); else ignored
  static Action fold() { return {ActionKind::kFold, 0}; }
  static Action check() { return {ActionKind::kCheck, 0}; }
  static Action call() { return {ActionKind::kCall, 0}; }
  static Action raise_to(std::int64_t to) { return {ActionKind::kRaise, to}; }
  // The same move: the amount counts only for raises.
  friend bool operator==(const Action& a, const Action& b) {
    return a.kind == b.kind && (a.kind != ActionKind::kRaise || a.amount == b.amount);
  }
  friend bool operator!=(const Action& a, const Action& b) { return !(a == b); }
};

// What the seat to act may do. Folding is always allowed.
struct LegalActions {
  bool can_check = false;        // nothing to call
  std::int64_t call_amount = 0;  // chips a call adds (all in if short); 0 when can_check
  bool can_raise = false;
  std::int64_t min_raise_to = 0;  // when can_raise; equals max_raise_to when only an all-in is left
  std::int64_t max_raise_to = 0;  // when can_raise: the seat's bet plus its whole stack (all in)
};

// One seat during a hand.
struct SeatState {
  std::int64_t stack = 0;      // chips behind ("remain")
  std::int64_t bet = 0;        // put in on this street
  std::int64_t committed = 0;  // put in this hand, all streets
  bool in_hand = false;        // dealt in (false: sat out with an empty stack)
  bool folded = false;
  bool all_in = false;
  std::vector<Card> hole;      // 2 cards when in_hand
};

// An action as it happened (blinds included), in order.
struct ActionRecord {
  int seat = 0;
  Street street = Street::kPreflop;
  ActionKind kind = ActionKind::kFold;
  std::int64_t added = 0;     // chips moved from stack to pot by it
  std::int64_t bet_to = 0;    // the seat's bet this street after it
  bool all_in = false;
};

struct Pot {
  std::int64_t amount = 0;
  std::vector<int> eligible;  // seats that can win it (not folded), ascending
};

struct PotAward {
  std::int64_t amount = 0;
  std::vector<int> winners;  // seats sharing it
};

struct HandResult {
  std::vector<std::int64_t> net;      // per seat: chips at the end minus at the start
  std::vector<PotAward> awards;       // main pot first, then side pots
  bool showdown = false;              // more than one seat reached the end
  std::vector<std::optional<HandValue>> shown;  // per seat: hands revealed at showdown
};

class Hand {
 public:
  // Starts a hand: checks the config (std::invalid_argument: seats outside
  // 2..9, blinds <= 0, small > big, stacks.size() != seats, a negative stack,
  // fewer than two stacks > 0, button not a seat), posts the blinds and deals
  // two cards to each seat in hand, starting left of the button. If the
  // button's stack is empty the blinds still go to the next seats in hand.
  // The board is dealt street by street: a stacked Deck(order) must hold 2
  // cards per seat in hand + 5 if the hand may reach the river (a deal from
  // an empty deck throws std::out_of_range and leaves the hand unusable).
  // Several seats may be all in at once, so the constructor itself may run
  // the board out and end the hand.
  Hand(const TableConfig& config, int button, const std::vector<std::int64_t>& stacks, Deck deck);

  bool over() const;
  int to_act() const;  // the seat to act; -1 when over()
  Street street() const;
  LegalActions legal() const;  // for to_act(); all false when over()
  // Checks the action against legal() (std::invalid_argument naming the rule
  // broken, the hand unchanged) and plays it; deals the next street or ends
  // the hand when the round is complete.
  void apply(const Action& action);
  // Why `action` would be illegal now; empty when legal.
  std::string check(const Action& action) const;

  const TableConfig& config() const;
  int button() const;
  int small_blind_seat() const;
  int big_blind_seat() const;
  // Once over(), each stack holds the seat's chips after the pots are paid
  // (start + result().net); committed still says what it put in.
  const std::vector<SeatState>& seats() const;
  const std::vector<Card>& board() const;  // 0, 3, 4 or 5 cards
  std::int64_t pot() const;                // every chip committed so far, bets included
  // The bet to match this street: the highest bet, preflop at least the big
  // blind even when the big blind was posted short.
  std::int64_t current_bet() const;
  // Main then side pots from what is committed: one capped at each live
  // all-in seat's commitment, the last taking the rest. Seats that can still
  // act are eligible for every pot. While the hand is on every committed
  // chip is in a pot (a bet may still be called); once over(), the part of a
  // bet nobody matched is left out (it went back to its owner), and these
  // are the pots result().awards pays, in the same order.
  std::vector<Pot> pots() const;
  const std::vector<ActionRecord>& log() const;
  // Valid once over(); std::logic_error before.
  const HandResult& result() const;

 private:
  // Plain values only (no pointers into itself): a Hand stays copyable, so a
  // bot may play a copy forward.
  SeatState& seat(int index) { return seats_[static_cast<std::size_t>(index)]; }
  const SeatState& seat(int index) const { return seats_[static_cast<std::size_t>(index)]; }
  int seat_count() const { return static_cast<int>(seats_.size()); }
  bool is_live(int index) const;  // dealt in and not folded
  bool can_act(int index) const;  // live and not all in
  int live_count() const;
  int able_count() const;  // seats that can act
  int next_in_hand(int after) const;
  std::int64_t highest_other_bet(int index) const;  // among live seats
  bool needs_action(int index) const;
  int next_needing_action(int after) const;   // -1 when the round is complete
  bool betting_reopened_for(int index) const;
  bool someone_could_answer_a_raise(int index) const;
  const char* why_no_raise(int index) const;  // nullptr when the seat may raise
  std::string raise_error(std::int64_t to, const LegalActions& options) const;

  void choose_blind_seats();
  void post_blind(int index, std::int64_t blind, ActionKind kind);
  void deal_hole_cards();
  void put_in(int index, std::int64_t chips);
  void record(int index, ActionKind kind, std::int64_t added);
  void play(const Action& action);
  void raise_to(int index, std::int64_t to);
  void advance(int after);
  void start_next_street();
  void finish();
  std::vector<std::int64_t> contested_chips() const;
  HandValue value_of(int index) const;
  std::vector<int> winners_of(const Pot& pot) const;
  void pay(const PotAward& award, std::vector<std::int64_t>& paid) const;

  TableConfig config_;
  int button_ = 0;
  int small_blind_seat_ = -1;
  int big_blind_seat_ = -1;
  std::vector<SeatState> seats_;
  std::vector<std::int64_t> starting_stacks_;
  // Per seat: acted since the street began or the last full raise. A seat
  // that has acted may not raise again until a full raise reopens the betting.
  std::vector<bool> acted_;
  std::vector<std::int64_t> bet_when_acted_;  // per seat: current_bet_ right after its last action
  Deck deck_;
  std::vector<Card> board_;
  Street street_ = Street::kPreflop;
  int to_act_ = -1;                 // -1 once the hand is over
  std::int64_t current_bet_ = 0;    // the bet to match; preflop at least the big blind
  std::int64_t largest_raise_ = 0;  // this street, at least the big blind
  std::vector<ActionRecord> log_;
  HandResult result_;
};

// How many actions of `kind` the hand's log has on `street` (preflop raises
// tell an open from a re-raise, calls the limpers).
int count_actions(const Hand& hand, Street street, ActionKind kind);

}  // namespace kvframe::examples::holdem
