#include "holdem/raise_sizes.h"

#include <algorithm>
#include <cmath>

namespace kvframe::examples::holdem {
namespace {

std::int64_t share_of(std::int64_t chips, double share) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(chips) * share));
}

// The amount before clamping to the legal range.
std::int64_t unclamped_raise_to(const Hand& hand, RaiseSize size, const LegalActions& legal) {
  // Pot-sized raises count the call first: the pot as it is once the call is in.
  const std::int64_t pot_after_call = hand.pot() + legal.call_amount;
  switch (size) {
    case RaiseSize::kOpen: {
      if (count_actions(hand, Street::kPreflop, ActionKind::kRaise) > 0) return 3 * hand.current_bet();
      const int limpers = count_actions(hand, Street::kPreflop, ActionKind::kCall);
      return (3 + limpers) * hand.config().big_blind;
    }
    case RaiseSize::kHalfPot: return hand.current_bet() + share_of(pot_after_call, 0.5);
    case RaiseSize::kTwoThirdsPot: return hand.current_bet() + share_of(pot_after_call, 2.0 / 3);
    case RaiseSize::kPot: return hand.current_bet() + pot_after_call;
    case RaiseSize::kAllIn: return legal.max_raise_to;
  }
  return legal.max_raise_to;
}

std::string label_of(const Hand& hand, RaiseSize size) {
  switch (size) {
    case RaiseSize::kOpen:
      return count_actions(hand, Street::kPreflop, ActionKind::kRaise) > 0 ? "three times the bet" : "open";
    case RaiseSize::kHalfPot: return "half pot";
    case RaiseSize::kTwoThirdsPot: return "two thirds pot";
    case RaiseSize::kPot: return "pot";
    case RaiseSize::kAllIn: return "all in";
  }
  return "all in";
}

}  // namespace

std::int64_t raise_to(const Hand& hand, RaiseSize size) {
  const LegalActions legal = hand.legal();
  return std::clamp(unclamped_raise_to(hand, size, legal), legal.min_raise_to, legal.max_raise_to);
}

std::vector<RaiseOption> raise_menu(const Hand& hand) {
  const LegalActions legal = hand.legal();
  if (!legal.can_raise) return {};
  const bool preflop = hand.street() == Street::kPreflop;
  const std::vector<RaiseSize> sizes =
      preflop ? std::vector<RaiseSize>{RaiseSize::kOpen, RaiseSize::kPot, RaiseSize::kAllIn}
              : std::vector<RaiseSize>{RaiseSize::kHalfPot, RaiseSize::kTwoThirdsPot, RaiseSize::kPot,
                                       RaiseSize::kAllIn};
  std::vector<RaiseOption> menu;
  for (RaiseSize size : sizes) {
    const std::int64_t to = raise_to(hand, size);
    const std::string label = to == legal.max_raise_to ? label_of(hand, RaiseSize::kAllIn) : label_of(hand, size);
    const bool seen = std::any_of(menu.begin(), menu.end(), [&](const RaiseOption& o) { return o.to == to; });
    if (!seen) menu.push_back({to, label});
  }
  std::sort(menu.begin(), menu.end(), [](const RaiseOption& a, const RaiseOption& b) { return a.to < b.to; });
  return menu;
}

std::vector<std::int64_t> raise_amounts(const std::vector<RaiseOption>& menu) {
  std::vector<std::int64_t> amounts;
  for (const RaiseOption& option : menu) amounts.push_back(option.to);
  return amounts;
}

}  // namespace kvframe::examples::holdem
