#include "holdem/table.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

namespace kvframe::examples::holdem {
namespace {

constexpr int kHoleCards = 2;
constexpr int kFlopCards = 3;

void validate(const TableConfig& config, int button, const std::vector<std::int64_t>& stacks) {
  const auto fail = [](const std::string& why) { throw std::invalid_argument("holdem: " + why); };
  if (config.seats < kMinSeats || config.seats > kMaxSeats) {
    fail("seats must be 2..9, got " + std::to_string(config.seats));
  }
  if (config.small_blind <= 0 || config.big_blind <= 0) fail("blinds must be positive");
  if (config.small_blind > config.big_blind) {
    fail("small blind " + std::to_string(config.small_blind) + " is above the big blind " +
         std::to_string(config.big_blind));
  }
  if (stacks.size() != static_cast<std::size_t>(config.seats)) {
    fail(std::to_string(config.seats) + " seats but " + std::to_string(stacks.size()) + " stacks");
  }
  if (std::any_of(stacks.begin(), stacks.end(), [](std::int64_t s) { return s < 0; })) {
    fail("stacks must not be negative");
  }
  if (std::count_if(stacks.begin(), stacks.end(), [](std::int64_t s) { return s > 0; }) < 2) {
    fail("a hand needs at least two seats with chips");
  }
  if (button < 0 || button >= config.seats) {
    fail("button " + std::to_string(button) + " is not a seat (0.." +
         std::to_string(config.seats - 1) + ")");
  }
}

}  // namespace

const char* street_name(Street street) {
  switch (street) {
    case Street::kPreflop: return "preflop";
    case Street::kFlop: return "flop";
    case Street::kTurn: return "turn";
    case Street::kRiver: return "river";
  }
  return "?";
}

const char* action_name(ActionKind kind) {
  switch (kind) {
    case ActionKind::kFold: return "fold";
    case ActionKind::kCheck: return "check";
    case ActionKind::kCall: return "call";
    case ActionKind::kRaise: return "raise";
    case ActionKind::kSmallBlind: return "small_blind";
    case ActionKind::kBigBlind: return "big_blind";
  }
  return "?";
}

Hand::Hand(const TableConfig& config, int button, const std::vector<std::int64_t>& stacks,
           Deck deck)
    : config_(config), button_(button), deck_(std::move(deck)) {
  validate(config, button, stacks);
  starting_stacks_ = stacks;
  seats_.resize(stacks.size());
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    seats_[i].stack = stacks[i];
    seats_[i].in_hand = stacks[i] > 0;
  }
  acted_.assign(stacks.size(), false);
  bet_when_acted_.assign(stacks.size(), 0);
  choose_blind_seats();
  post_blind(small_blind_seat_, config_.small_blind, ActionKind::kSmallBlind);
  post_blind(big_blind_seat_, config_.big_blind, ActionKind::kBigBlind);
  // A short big blind does not lower the price of playing: the others still
  // call the full big blind (what nobody matches goes back at the end).
  current_bet_ = config_.big_blind;
  largest_raise_ = config_.big_blind;
  deal_hole_cards();
  advance(big_blind_seat_);
}

// --- state queries -------------------------------------------------------

bool Hand::over() const { return to_act_ < 0; }
int Hand::to_act() const { return to_act_; }
Street Hand::street() const { return street_; }
const TableConfig& Hand::config() const { return config_; }
int Hand::button() const { return button_; }
int Hand::small_blind_seat() const { return small_blind_seat_; }
int Hand::big_blind_seat() const { return big_blind_seat_; }
const std::vector<SeatState>& Hand::seats() const { return seats_; }
const std::vector<Card>& Hand::board() const { return board_; }
std::int64_t Hand::current_bet() const { return current_bet_; }
const std::vector<ActionRecord>& Hand::log() const { return log_; }

std::int64_t Hand::pot() const {
  std::int64_t total = 0;
  for (const SeatState& s : seats_) total += s.committed;
  return total;
}

const HandResult& Hand::result() const {
  if (!over()) throw std::logic_error("holdem: result() before the hand is over");
  return result_;
}

bool Hand::is_live(int index) const { return seat(index).in_hand && !seat(index).folded; }
bool Hand::can_act(int index) const { return is_live(index) && !seat(index).all_in; }

int Hand::live_count() const {
  int count = 0;
  for (int i = 0; i < seat_count(); ++i) count += is_live(i) ? 1 : 0;
  return count;
}

int Hand::able_count() const {
  int count = 0;
  for (int i = 0; i < seat_count(); ++i) count += can_act(i) ? 1 : 0;
  return count;
}

int Hand::next_in_hand(int after) const {
  for (int step = 1; step <= seat_count(); ++step) {
    const int index = (after + step) % seat_count();
    if (seat(index).in_hand) return index;
  }
  return -1;  // unreachable: the constructor demands two seats with chips
}

std::int64_t Hand::highest_other_bet(int index) const {
  std::int64_t highest = 0;
  for (int i = 0; i < seat_count(); ++i) {
    if (i != index && is_live(i)) highest = std::max(highest, seat(i).bet);
  }
  return highest;
}

bool Hand::needs_action(int index) const {
  if (!can_act(index)) return false;
  const SeatState& s = seat(index);
  if (able_count() > 1) return !acted_[static_cast<std::size_t>(index)] || s.bet < current_bet_;
  // Alone with chips: nobody could answer a raise, so the seat only has to
  // answer an all-in it has not matched yet.
  return s.bet < highest_other_bet(index);
}

int Hand::next_needing_action(int after) const {
  for (int step = 1; step <= seat_count(); ++step) {
    const int index = (after + step) % seat_count();
    if (needs_action(index)) return index;
  }
  return -1;
}

// --- legality ------------------------------------------------------------

// Reopened for a seat that already acted only when what it now faces, since it
// last acted, adds up to a full raise: several short all-ins together may
// (TDA Rule 47; Robert's Rules of Poker, section 14).
bool Hand::betting_reopened_for(int index) const {
  const auto i = static_cast<std::size_t>(index);
  return !acted_[i] || current_bet_ - bet_when_acted_[i] >= largest_raise_;
}

// Another live seat could put in more than the bet to match: otherwise a
// raise could only be called all in for less, by nobody or by chips already
// short of the current bet.
bool Hand::someone_could_answer_a_raise(int index) const {
  for (int i = 0; i < seat_count(); ++i) {
    if (i != index && can_act(i) && seat(i).bet + seat(i).stack > current_bet_) return true;
  }
  return false;
}

const char* Hand::why_no_raise(int index) const {
  const SeatState& s = seat(index);
  if (s.stack <= current_bet_ - s.bet) return "cannot raise: calling takes the whole stack";
  if (!betting_reopened_for(index)) {
    return "cannot raise: all-ins below a full raise since this seat acted do not reopen the betting";
  }
  if (!someone_could_answer_a_raise(index)) {
    return "cannot raise: every other seat is all in, folded, or cannot cover the bet";
  }
  return nullptr;
}

LegalActions Hand::legal() const {
  LegalActions options;
  if (over()) return options;
  const SeatState& s = seat(to_act_);
  const std::int64_t to_call = current_bet_ - s.bet;
  options.can_check = to_call == 0;
  options.call_amount = std::min(to_call, s.stack);
  options.can_raise = why_no_raise(to_act_) == nullptr;
  if (options.can_raise) {
    options.max_raise_to = s.bet + s.stack;
    options.min_raise_to = std::min(current_bet_ + largest_raise_, options.max_raise_to);
  }
  return options;
}

std::string Hand::raise_error(std::int64_t to, const LegalActions& options) const {
  if (!options.can_raise) return why_no_raise(to_act_);
  if (to > options.max_raise_to) {
    return "raise to " + std::to_string(to) + " is more than the stack: at most " +
           std::to_string(options.max_raise_to);
  }
  if (to < options.min_raise_to) {
    return "raise to " + std::to_string(to) + " is below the minimum " +
           std::to_string(options.min_raise_to);
  }
  return {};
}

std::string Hand::check(const Action& action) const {
  if (over()) return "the hand is over";
  const LegalActions options = legal();
  switch (action.kind) {
    case ActionKind::kFold: return {};
    case ActionKind::kCheck:
      if (options.can_check) return {};
      return "cannot check: " + std::to_string(options.call_amount) + " to call";
    case ActionKind::kCall:
      if (!options.can_check) return {};
      return options.can_raise ? "nothing to call: check or raise" : "nothing to call: check";
    case ActionKind::kRaise: return raise_error(action.amount, options);
    case ActionKind::kSmallBlind:
    case ActionKind::kBigBlind: return "blinds are posted by the table, not played";
  }
  return "unknown action";
}

// --- playing -------------------------------------------------------------

void Hand::choose_blind_seats() {
  int in_hand = 0;
  for (const SeatState& s : seats_) in_hand += s.in_hand ? 1 : 0;
  const bool heads_up = in_hand == 2 && seat(button_).in_hand;
  small_blind_seat_ = heads_up ? button_ : next_in_hand(button_);
  big_blind_seat_ = next_in_hand(small_blind_seat_);
}

void Hand::post_blind(int index, std::int64_t blind, ActionKind kind) {
  const std::int64_t chips = std::min(blind, seat(index).stack);
  put_in(index, chips);
  record(index, kind, chips);
}

// One card at a time, starting left of the button, twice round. No burn
// cards: the deck's order alone decides the deal, which keeps replays and
// tests that stack the deck simple.
void Hand::deal_hole_cards() {
  for (int round = 0; round < kHoleCards; ++round) {
    for (int step = 1; step <= seat_count(); ++step) {
      SeatState& s = seat((button_ + step) % seat_count());
      if (s.in_hand) s.hole.push_back(deck_.deal());
    }
  }
}

void Hand::put_in(int index, std::int64_t chips) {
  SeatState& s = seat(index);
  s.stack -= chips;
  s.bet += chips;
  s.committed += chips;
  s.all_in = s.stack == 0;
}

void Hand::record(int index, ActionKind kind, std::int64_t added) {
  const SeatState& s = seat(index);
  log_.push_back({index, street_, kind, added, s.bet, s.all_in});
}

void Hand::apply(const Action& action) {
  const std::string error = check(action);
  if (!error.empty()) throw std::invalid_argument(error);
  play(action);
}

void Hand::play(const Action& action) {
  const int actor = to_act_;
  SeatState& s = seat(actor);
  switch (action.kind) {
    case ActionKind::kFold:
      s.folded = true;
      record(actor, ActionKind::kFold, 0);
      break;
    case ActionKind::kCheck: record(actor, ActionKind::kCheck, 0); break;
    case ActionKind::kCall: {
      const std::int64_t chips = std::min(current_bet_ - s.bet, s.stack);
      put_in(actor, chips);
      record(actor, ActionKind::kCall, chips);
      break;
    }
    case ActionKind::kRaise: raise_to(actor, action.amount); break;
    default: break;  // blinds: refused by check()
  }
  acted_[static_cast<std::size_t>(actor)] = true;
  bet_when_acted_[static_cast<std::size_t>(actor)] = current_bet_;
  advance(actor);
}

void Hand::raise_to(int index, std::int64_t to) {
  // Only a full raise reopens the betting for the seats that already acted;
  // a shorter all-in leaves them calling or folding.
  const std::int64_t raise = to - current_bet_;
  if (raise >= largest_raise_) {
    largest_raise_ = raise;
    std::fill(acted_.begin(), acted_.end(), false);
  }
  const std::int64_t chips = to - seat(index).bet;
  put_in(index, chips);
  record(index, ActionKind::kRaise, chips);
  current_bet_ = to;
}

// Passes the turn clockwise from `after`; when nobody needs to act, deals the
// next street (running the board out while at most one seat can bet) or ends
// the hand.
void Hand::advance(int after) {
  if (live_count() == 1) return finish();
  int next = next_needing_action(after);
  while (next < 0) {
    if (street_ == Street::kRiver) return finish();
    start_next_street();
    next = next_needing_action(button_);
  }
  to_act_ = next;
}

void Hand::start_next_street() {
  street_ = static_cast<Street>(static_cast<int>(street_) + 1);
  for (SeatState& s : seats_) s.bet = 0;
  std::fill(acted_.begin(), acted_.end(), false);
  current_bet_ = 0;
  largest_raise_ = config_.big_blind;
  const int cards = street_ == Street::kFlop ? kFlopCards : 1;
  for (int i = 0; i < cards; ++i) board_.push_back(deck_.deal());
}

// --- pots and showdown ---------------------------------------------------

// Each seat's committed chips, less (once the hand is over) the part of the
// biggest commitment that no other seat matched: that goes back to its owner.
// While the hand is on, an unmatched bet may still be called.
std::vector<std::int64_t> Hand::contested_chips() const {
  std::vector<std::int64_t> chips;
  for (const SeatState& s : seats_) chips.push_back(s.committed);
  if (!over()) return chips;
  const auto top = std::max_element(chips.begin(), chips.end());
  std::int64_t second = 0;
  for (auto it = chips.begin(); it != chips.end(); ++it) {
    if (it != top) second = std::max(second, *it);
  }
  *top = std::min(*top, second);
  return chips;
}

// Pots are capped at the commitment of each live all-in seat; the last one
// takes the rest. Seats that can still act are eligible for every pot (they
// must match it or fold).
std::vector<Pot> Hand::pots() const {
  const std::vector<std::int64_t> chips = contested_chips();
  std::vector<std::int64_t> caps;
  for (int i = 0; i < seat_count(); ++i) {
    if (is_live(i) && seat(i).all_in) caps.push_back(chips[static_cast<std::size_t>(i)]);
  }
  caps.push_back(*std::max_element(chips.begin(), chips.end()));
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());

  std::vector<Pot> out;
  std::int64_t below = 0;
  for (const std::int64_t cap : caps) {
    Pot pot;
    for (int i = 0; i < seat_count(); ++i) {
      const std::int64_t mine = chips[static_cast<std::size_t>(i)];
      pot.amount += std::min(mine, cap) - std::min(mine, below);
      if (can_act(i) || (is_live(i) && mine >= cap)) pot.eligible.push_back(i);
    }
    if (pot.amount > 0) out.push_back(std::move(pot));
    below = cap;
  }
  return out;
}

HandValue Hand::value_of(int index) const {
  std::array<Card, 7> cards{};
  const std::vector<Card>& hole = seat(index).hole;
  const auto after_hole = std::copy(hole.begin(), hole.end(), cards.begin());
  std::copy(board_.begin(), board_.end(), after_hole);
  return evaluate(cards.data(), static_cast<int>(hole.size() + board_.size()));
}

std::vector<int> Hand::winners_of(const Pot& pot) const {
  if (pot.eligible.size() == 1) return pot.eligible;
  const auto shown = [&](int i) { return *result_.shown[static_cast<std::size_t>(i)]; };
  HandValue best;
  for (const int i : pot.eligible) best = std::max(best, shown(i));
  std::vector<int> winners;
  for (const int i : pot.eligible) {
    if (shown(i) == best) winners.push_back(i);
  }
  return winners;
}

// Splits an award evenly; the odd chips go one each to the winners nearest
// the button's left, clockwise.
void Hand::pay(const PotAward& award, std::vector<std::int64_t>& paid) const {
  std::vector<int> order = award.winners;
  const auto clockwise = [&](int i) { return (i - button_ - 1 + seat_count()) % seat_count(); };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return clockwise(a) < clockwise(b); });
  const auto count = static_cast<std::int64_t>(order.size());
  const std::int64_t share = award.amount / count, odd = award.amount % count;
  for (std::int64_t k = 0; k < count; ++k) {
    paid[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] += share + (k < odd ? 1 : 0);
  }
}

void Hand::finish() {
  to_act_ = -1;
  const std::size_t n = seats_.size();
  result_.showdown = live_count() > 1;
  result_.shown.assign(n, std::nullopt);
  if (result_.showdown) {
    for (int i = 0; i < seat_count(); ++i) {
      if (is_live(i)) result_.shown[static_cast<std::size_t>(i)] = value_of(i);
    }
  }
  std::vector<std::int64_t> paid(n, 0);
  const std::vector<std::int64_t> contested = contested_chips();
  for (std::size_t i = 0; i < n; ++i) paid[i] = seats_[i].committed - contested[i];  // uncalled
  for (const Pot& pot : pots()) {
    PotAward award{pot.amount, winners_of(pot)};
    pay(award, paid);
    result_.awards.push_back(std::move(award));
  }
  result_.net.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    seats_[i].stack += paid[i];
    result_.net[i] = seats_[i].stack - starting_stacks_[i];
  }
}

int count_actions(const Hand& hand, Street street, ActionKind kind) {
  int count = 0;
  for (const ActionRecord& record : hand.log()) count += record.street == street && record.kind == kind;
  return count;
}

}  // namespace kvframe::examples::holdem
