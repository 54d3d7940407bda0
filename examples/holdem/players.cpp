#include "holdem/players.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "holdem/raise_sizes.h"
#include "holdem/seat_read.h"

namespace kvframe::examples::holdem {
namespace {

Action check_or_call(const LegalActions& legal) { return legal.can_check ? Action::check() : Action::call(); }

// Folding what could be checked gives chips away for nothing.
Action check_or_fold(const LegalActions& legal) { return legal.can_check ? Action::check() : Action::fold(); }

// A raise of one of the offered sizes (raise_sizes.h); a call when no raise is open.
Action raise_or_call(const Hand& hand, const LegalActions& legal, RaiseSize size) {
  if (!legal.can_raise) return check_or_call(legal);
  return Action::raise_to(raise_to(hand, size));
}

const SeatState& seat_state(const Hand& hand, int seat) { return hand.seats()[static_cast<std::size_t>(seat)]; }

int seats_dealt_in(const Hand& hand) {
  int count = 0;
  for (const SeatState& seat : hand.seats()) count += seat.in_hand;
  return count;
}

// Opponents still able to act after `seat` in an unopened preflop round: from
// its left up to the big blind, who acts last.
int seats_behind(const Hand& hand, int seat) {
  const int seats = hand.config().seats;
  int count = 0;
  for (int s = seat; s != hand.big_blind_seat();) {
    s = (s + 1) % seats;
    const SeatState& other = seat_state(hand, s);
    count += other.in_hand && !other.folded && !other.all_in;
  }
  return count;
}

bool last_preflop_raiser(const Hand& hand, int seat) {
  int raiser = -1;
  for (const ActionRecord& record : hand.log()) {
    if (record.street == Street::kPreflop && record.kind == ActionKind::kRaise) raiser = record.seat;
  }
  return raiser == seat;
}

// Bill Chen's starting-hand score: about -1 (72 offsuit) .. 20 (aces). High
// card points, doubled for a pair (at least 5), +2 suited, minus the gap
// between the ranks, +1 for connected cards below a queen (straight chances).
int chen_score(Card a, Card b) {
  const int high = std::max(rank_of(a), rank_of(b)), low = std::min(rank_of(a), rank_of(b));
  const auto points = [](int rank) {
    switch (rank) {
      case kAce: return 10.0;
      case kKing: return 8.0;
      case kQueen: return 7.0;
      case kJack: return 6.0;
      default: return (rank + 2) / 2.0;  // the card's face value halved
    }
  };
  double score = points(high);
  if (high == low) return static_cast<int>(std::ceil(std::max(2 * score, 5.0)));
  if (suit_of(a) == suit_of(b)) score += 2;
  const int gap = high - low - 1;
  constexpr double kGapPenalty[] = {0, 1, 2, 4, 5};
  score -= kGapPenalty[std::min(gap, 4)];
  if (gap <= 1 && high < kQueen) score += 1;
  return static_cast<int>(std::ceil(score));
}

// Scores a hand needs to play (the share of hands that reach it in
// parentheses). Fewer players behind, fewer who can hold better: late position
// opens wider, heads-up wider still.
constexpr int kReraise = 10;       // TT+, AK, AJs+, KQs (4%): re-raise one raise
constexpr int kReraiseAgain = 14;  // QQ+ (1.4%): re-raise a re-raise
constexpr int kCallReraise = 11;   // JJ+, AQs+ (2.4%): call a re-raise
constexpr int kColdCall = 8;       // 88+, AJ+, KQ, suited broadways, 98s (11%): call one raise
constexpr int kHeadsUpOpen = 3;    // the button (67%)
constexpr int kHeadsUpDefend = 4;  // the big blind against one raise (52%)

int open_threshold(int behind, bool heads_up) {
  if (heads_up) return kHeadsUpOpen;
  // Small blind or button 5 (43%), cutoff 6 (26%), six-handed UTG 8 (11%),
  // nine-handed UTG 9 (7%).
  return std::clamp(3 + behind, 5, 9);
}

// A raise bigger than this share of the stack risks too much for a
// speculative call; re-raising hands go on anyway.
constexpr double kSpeculativeStackShare = 0.2;

Action preflop_action(const Hand& hand, int seat, const LegalActions& legal) {
  const SeatState& me = seat_state(hand, seat);
  const int score = chen_score(me.hole[0], me.hole[1]);
  const bool heads_up = seats_dealt_in(hand) == 2;
  const int raises = count_actions(hand, Street::kPreflop, ActionKind::kRaise);
  if (raises == 0) {
    if (score < open_threshold(seats_behind(hand, seat), heads_up)) return check_or_fold(legal);
    return raise_or_call(hand, legal, RaiseSize::kOpen);  // ~3bb, one more per limper
  }
  if (raises == 1) {
    if (score >= kReraise) return raise_or_call(hand, legal, RaiseSize::kOpen);  // three times the bet
    const bool affordable =
        static_cast<double>(legal.call_amount) <= kSpeculativeStackShare * static_cast<double>(me.stack + me.bet);
    if (affordable && score >= (heads_up ? kHeadsUpDefend : kColdCall)) return check_or_call(legal);
    return check_or_fold(legal);
  }
  if (score >= kReraiseAgain) return raise_or_call(hand, legal, RaiseSize::kOpen);
  return score >= kCallReraise ? check_or_call(legal) : check_or_fold(legal);
}

// Postflop thresholds on equity against the opponents still in.
constexpr double kValueRaiseEquity = 0.75;  // raise the pot
constexpr double kValueBetEquity = 0.6;     // bet two thirds of the pot when checked to
constexpr double kCallMargin = 0.03;        // equity above the pot odds that a call wants
constexpr double kContinuationBetChance = 0.5;

Action postflop_action(const Hand& hand, int seat, const LegalActions& legal, DeterministicRng& rng, int trials) {
  const int opponents = opponents_in(hand, seat);
  // The estimate the gamecore's "your_read" shows the LLM bot.
  const double win = seat_equity(hand, seat, trials, rng);
  const std::int64_t pot = hand.pot();
  if (win > kValueRaiseEquity && legal.can_raise) {
    return raise_or_call(hand, legal, RaiseSize::kPot);
  }
  if (legal.can_check) {
    if (win > kValueBetEquity && legal.can_raise) {
      return raise_or_call(hand, legal, RaiseSize::kTwoThirdsPot);
    }
    // Having raised preflop, the story of a strong hand is told cheaply
    // against one or two opponents on the flop.
    const bool continuation = hand.street() == Street::kFlop && opponents <= 2 && last_preflop_raiser(hand, seat);
    if (continuation && legal.can_raise && rng.chance(kContinuationBetChance)) {
      return raise_or_call(hand, legal, RaiseSize::kHalfPot);
    }
    return Action::check();
  }
  return win >= pot_odds(legal.call_amount, pot) + kCallMargin ? Action::call() : Action::fold();
}

}  // namespace

RandomPlayer::RandomPlayer(std::uint64_t seed) : rng_(seed) {}

Decision RandomPlayer::decide(const DecisionView& view) {
  const LegalActions legal = view.hand.legal();
  enum class Choice { kFold, kCheckOrCall, kRaise };
  std::vector<Choice> choices = {Choice::kCheckOrCall};
  if (!legal.can_check) choices.push_back(Choice::kFold);  // folding a free check is no choice
  if (legal.can_raise) choices.push_back(Choice::kRaise);
  Decision decision;
  switch (rng_.pick(choices)) {
    case Choice::kFold: decision.action = Action::fold(); break;
    case Choice::kCheckOrCall: decision.action = check_or_call(legal); break;
    case Choice::kRaise: {
      // u^3 puts half the raises in the bottom eighth of the range.
      const double u = rng_.unit();
      const double span = static_cast<double>(legal.max_raise_to - legal.min_raise_to + 1);
      decision.action = Action::raise_to(legal.min_raise_to + static_cast<std::int64_t>(u * u * u * span));
      break;
    }
  }
  return decision;
}

Decision CallingStation::decide(const DecisionView& view) {
  Decision decision;
  decision.action = check_or_call(view.hand.legal());
  return decision;
}

TightAggressive::TightAggressive(std::uint64_t seed) : TightAggressive(seed, Params{}) {}

TightAggressive::TightAggressive(std::uint64_t seed, Params params) : rng_(seed), params_(params) {}

Decision TightAggressive::decide(const DecisionView& view) {
  const LegalActions legal = view.hand.legal();
  Decision decision;
  decision.action = view.hand.street() == Street::kPreflop
                        ? preflop_action(view.hand, view.seat, legal)
                        : postflop_action(view.hand, view.seat, legal, rng_, params_.trials);
  return decision;
}

std::unique_ptr<Player> make_rule_player(const std::string& kind, std::uint64_t seed) {
  if (kind == "random") return std::make_unique<RandomPlayer>(seed);
  if (kind == "station") return std::make_unique<CallingStation>();
  if (kind == "tag") return std::make_unique<TightAggressive>(seed);
  return nullptr;
}

}  // namespace kvframe::examples::holdem
