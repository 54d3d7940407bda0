// bench_hand_eval: the Hold'em hand evaluator and Monte Carlo equity.
//
//   build/bench/bench_hand_eval [--five] [--random N] [--equity-calls N] [--seed S]
//
// Evaluates every one of the 133,784,560 seven-card hands (for_each_hand, the
// cards in deck order) and checks the category counts against the published
// ones; then times evaluate() on pre-generated random 7-card hands (no
// loop-to-loop locality) and equity() at 1, 3 and 5 opponents with 1,000
// trials. --five also enumerates the 2,598,960 five-card hands.
// Exit status 0 when every count matches, 4 otherwise.
#include <CLI/CLI.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "common/deterministic_rng.h"
#include "holdem/cards.h"
#include "holdem/equity.h"
#include "holdem/hand_eval.h"
#include "sample_stats.h"

namespace {

namespace holdem = kvframe::examples::holdem;
using Clock = std::chrono::steady_clock;
using Counts = std::array<std::uint64_t, holdem::kHandCategories>;
using kvframe::bench::mean;
using kvframe::bench::percentile;
using kvframe::examples::DeterministicRng;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Published category counts (e.g. Wikipedia, "Poker probability").
constexpr Counts kPublishedSeven = {23'294'460, 58'627'800, 31'433'400, 6'461'620, 6'180'020,
                                    4'047'644,  3'473'184,  224'848,    41'584};
constexpr Counts kPublishedFive = {1'302'540, 1'098'240, 123'552, 54'912, 10'200, 5'108, 3'744, 624, 40};

struct Enumeration {
  Counts counts{};
  std::uint64_t hands = 0;
  double seconds = 0;
};

// Every K-card hand; for 7 cards progress goes to stderr about every 10%
// of the hands.
template <std::size_t K>
Enumeration enumerate(std::uint64_t total) {
  Enumeration out;
  std::uint64_t next_report = total / 10;
  const auto start = Clock::now();
  holdem::for_each_hand<K>([&](const holdem::Card* hand) {
    ++out.counts[static_cast<std::size_t>(holdem::evaluate(hand, K).category())];
    if (++out.hands == next_report && K == 7) {
      std::fprintf(stderr, "[bench] %3.0f%% of 7-card hands (%.1f s)\n",
                   100.0 * static_cast<double>(out.hands) / static_cast<double>(total), seconds_since(start));
      next_report += total / 10;
    }
  });
  out.seconds = seconds_since(start);
  return out;
}

// Prints the counts against the published ones; true when all match.
bool report(const char* title, const Enumeration& run, const Counts& published) {
  std::printf("%s\n%-16s %12s %12s %6s\n", title, "category", "count", "published", "match");
  bool all_match = true;
  std::uint64_t published_total = 0;
  for (std::size_t i = 0; i < published.size(); ++i) {
    const bool match = run.counts[i] == published[i];
    all_match = all_match && match;
    published_total += published[i];
    std::printf("%-16s %12llu %12llu %6s\n", holdem::category_name(static_cast<holdem::HandCategory>(i)),
                static_cast<unsigned long long>(run.counts[i]), static_cast<unsigned long long>(published[i]),
                match ? "yes" : "NO");
  }
  const bool total_match = run.hands == published_total;
  std::printf("%-16s %12llu %12llu %6s\n", "total", static_cast<unsigned long long>(run.hands),
              static_cast<unsigned long long>(published_total), total_match ? "yes" : "NO");
  const double hands = static_cast<double>(run.hands);
  std::printf("%.3f s, %.2f ns/hand, %.1f M hands/s\n\n", run.seconds, run.seconds * 1e9 / hands,
              hands / run.seconds / 1e6);
  return all_match && total_match;
}

// 7 * count random cards, seven distinct to a hand.
std::vector<holdem::Card> random_hands(DeterministicRng& rng, std::size_t count) {
  std::vector<holdem::Card> deck(holdem::kCards);
  for (std::size_t card = 0; card < deck.size(); ++card) deck[card] = static_cast<holdem::Card>(card);
  std::vector<holdem::Card> hands;
  hands.reserve(7 * count);
  for (std::size_t h = 0; h < count; ++h) {
    for (std::size_t i = 0; i < 7; ++i) {
      std::swap(deck[i], deck[i + rng.below(deck.size() - i)]);
      hands.push_back(deck[i]);
    }
  }
  return hands;
}

void time_random_hands(DeterministicRng& rng, std::size_t count) {
  const std::vector<holdem::Card> hands = random_hands(rng, count);
  std::uint64_t checksum = 0;  // keeps the calls from being optimized away
  const auto start = Clock::now();
  for (std::size_t h = 0; h < count; ++h) checksum += holdem::evaluate7(hands.data() + 7 * h).value;
  const double seconds = seconds_since(start);
  std::printf("random 7-card hands: %zu in %.3f s, %.2f ns/hand, %.1f M hands/s (checksum %llx)\n\n", count, seconds,
              seconds * 1e9 / static_cast<double>(count), static_cast<double>(count) / seconds / 1e6,
              static_cast<unsigned long long>(checksum));
}

// equity() preflop with random hole cards, 1,000 trials a call.
void time_equity(DeterministicRng& rng, int calls) {
  constexpr int kTrials = 1000;
  std::printf("equity(), preflop, %d trials a call, %d calls each\n%-10s %10s %10s %10s %10s\n", kTrials, calls,
              "opponents", "p50 us", "p99 us", "mean us", "ns/trial");
  for (int opponents : {1, 3, 5}) {
    std::vector<double> us;
    double total_equity = 0;
    for (int call = 0; call < calls; ++call) {
      const std::vector<holdem::Card> two = random_hands(rng, 1);
      const auto start = Clock::now();
      total_equity += holdem::equity({two[0], two[1]}, {}, holdem::EquityParams{opponents, kTrials}, rng);
      us.push_back(seconds_since(start) * 1e6);
    }
    std::printf("%-10d %10.1f %10.1f %10.1f %10.1f   (mean equity %.3f)\n", opponents, percentile(us, 50),
                percentile(us, 99), mean(us), mean(us) * 1e3 / kTrials, total_equity / calls);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool five = false;
  std::size_t random_count = 10'000'000;
  int equity_calls = 500;
  std::uint64_t seed = 1;
  CLI::App app{"Hold'em hand evaluator: all 7-card hands against the published counts, random-hand and equity speed."};
  app.add_flag("--five", five, "also enumerate all 2,598,960 five-card hands");
  app.add_option("--random", random_count, "random 7-card hands to time")->capture_default_str();
  app.add_option("--equity-calls", equity_calls, "equity() calls per opponent count")->capture_default_str()->check(
      CLI::PositiveNumber);
  app.add_option("--seed", seed, "random seed")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;

  bool all_match = report("all 133,784,560 seven-card hands", enumerate<7>(133'784'560), kPublishedSeven);
  if (five) all_match = report("all 2,598,960 five-card hands", enumerate<5>(2'598'960), kPublishedFive) && all_match;

  DeterministicRng rng(seed);
  if (random_count > 0) time_random_hands(rng, random_count);
  time_equity(rng, equity_calls);
  std::printf("\ncounts %s the published values\n", all_match ? "match" : "DO NOT match");
  return all_match ? kvframe::kExitOk : kvframe::kExitCheckFailed;
}
