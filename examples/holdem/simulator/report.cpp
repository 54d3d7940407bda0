#include "holdem/simulator/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kvframe::examples::holdem {
namespace {

using Json = nlohmann::ordered_json;

// Rounded to `digits` decimals, dividing last so JSON prints 162.2, not
// 162.20000000000002 (1622 * 0.1 is not the double nearest 162.2).
double round_to(double value, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

// bb/100 and the half-width of its 95% confidence interval (normal
// approximation over per-hand results), from per-hand results in chips.
Json win_rate(const std::vector<double>& chips, std::int64_t big_blind) {
  const double n = static_cast<double>(chips.size());
  double sum = 0, squares = 0;
  for (double c : chips) sum += c / static_cast<double>(big_blind);
  const double mean = n > 0 ? sum / n : 0;
  for (double c : chips) squares += std::pow(c / static_cast<double>(big_blind) - mean, 2);
  const double sd = n > 1 ? std::sqrt(squares / (n - 1)) : 0;
  return {{"bb_per_100", round_to(100 * mean, 1)}, {"ci95", round_to(n > 0 ? 196 * sd / std::sqrt(n) : 0, 1)}};
}

// Per hand, what `a` won from `b`: every loser's chips go to the winners in
// proportion to what each won (exact heads-up; in multiway pots the split of
// one hand's flows is by share, and the pairs still sum to each one's net).
double won_from(const std::vector<std::int64_t>& net, std::size_t a, std::size_t b) {
  double wins = 0;
  for (std::int64_t chips : net) wins += chips > 0 ? static_cast<double>(chips) : 0;
  if (wins == 0) return 0;
  auto gain = [&](std::size_t s) { return net[s] > 0 ? static_cast<double>(net[s]) : 0.0; };
  auto loss = [&](std::size_t s) { return net[s] < 0 ? static_cast<double>(-net[s]) : 0.0; };
  return (loss(b) * gain(a) - loss(a) * gain(b)) / wins;
}

// Nearest-rank percentile.
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

Json spread(const std::vector<double>& values) {
  return {{"p50", round_to(percentile(values, 50), 1)}, {"p99", round_to(percentile(values, 99), 1)}};
}

// A count per action the bots play, all 0.
Json no_actions() { return {{"fold", 0}, {"check", 0}, {"call", 0}, {"raise", 0}}; }

void count(Json& counts, ActionKind kind) {
  Json& n = counts[action_name(kind)];
  n = n.get<int>() + 1;
}

// How often the bot played each action.
Json action_mix(const std::vector<const DecisionRecord*>& decisions) {
  Json mix = no_actions();
  for (const DecisionRecord* record : decisions) count(mix, record->decision.action.kind);
  return mix;
}

// The bot's action against the tight-aggressive bot's on the same states:
// matrix[its action][the bot's] counts decisions; agreement is by kind (a
// raise of another size still agrees).
Json against_reference(const std::vector<const DecisionRecord*>& decisions) {
  Json matrix = no_actions();
  for (auto& row : matrix.items()) row.value() = no_actions();
  std::int64_t compared = 0, agreed = 0;
  for (const DecisionRecord* record : decisions) {
    if (!record->decision.reference) continue;
    const ActionKind want = record->decision.reference->kind;
    count(matrix[action_name(want)], record->decision.action.kind);
    ++compared;
    agreed += want == record->decision.action.kind;
  }
  return {{"decisions", compared},
          {"agreement", compared > 0 ? round_to(static_cast<double>(agreed) / static_cast<double>(compared), 4) : 0.0},
          {"matrix", std::move(matrix)}};
}

// Each decision as every mode answered it, for what needs more than this
// report's totals (bench/bench_bot.py: each mode against the tag bot per
// class, the modes' disagreements by direction, KL between their action
// distributions): the tag bot's action, then per mode its action's kind
// ("invalid" when not legal), the action kinds' probabilities, the
// tokens it encoded and where its time to the first token went.
Json decision_records(const std::vector<const DecisionRecord*>& decisions) {
  Json records = Json::array();
  for (const DecisionRecord* record : decisions) {
    Json answers = Json::array();
    for (const ModelSample& s : record->decision.samples) {
      Json answer = {{"mode", s.mode},
                     {"action", s.valid ? action_name(s.action.kind) : "invalid"},
                     {"tokens_encoded", s.tokens_encoded},
                     {"tokens_encoded_superseded", s.tokens_encoded_superseded},
                     {"ms", {{"ttft", round_to(s.ttft_ms, 1)},
                             {"queue", round_to(s.queue_ms, 1)},
                             {"encode", round_to(s.encode_ms, 1)},
                             {"query_prefill", round_to(s.query_prefill_ms, 1)},
                             {"first_token", round_to(s.first_token_ms, 1)}}}};
      if (s.choice) {
        Json p = Json::object();
        for (const auto& [name, probability] : s.choice->probability) p[name] = round_to(probability, 6);
        answer["p"] = std::move(p);
        answer["covered"] = round_to(s.choice->covered, 6);
      }
      answers.push_back(std::move(answer));
    }
    records.push_back({{"hand", record->hand},
                       {"street", street_name(record->street)},
                       {"tag", record->decision.reference ? action_name(record->decision.reference->kind) : ""},
                       {"modes", std::move(answers)}});
  }
  return records;
}

Json mode_stats(const std::string& mode, const std::vector<const DecisionRecord*>& decisions) {
  std::vector<double> ttft, total;
  double encoded = 0, superseded = 0, prompt = 0, reused = 0, blocks = 0;
  std::int64_t valid = 0, agree = 0, agree_kind = 0, played_here = 0;
  for (const DecisionRecord* record : decisions) {
    const std::vector<ModelSample>& samples = record->decision.samples;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const ModelSample& s = samples[i];
      if (s.mode != mode) continue;
      ++played_here;
      ttft.push_back(s.ttft_ms);
      total.push_back(s.total_ms);
      encoded += static_cast<double>(s.tokens_encoded);
      superseded += static_cast<double>(s.tokens_encoded_superseded);
      prompt += static_cast<double>(s.tokens_prompt);
      reused += static_cast<double>(s.blocks_reused);
      blocks += static_cast<double>(s.blocks_total);
      valid += s.valid;
      agree += s.chose(record->decision.action);
      agree_kind += s.valid && s.action.kind == record->decision.action.kind;
    }
  }
  const double n = std::max<double>(1, static_cast<double>(played_here));
  return {{"mode", mode},
          {"decisions", played_here},
          {"ttft_ms", spread(ttft)},
          {"total_ms", spread(total)},
          {"tokens_encoded", round_to(encoded / n, 1)},
          {"tokens_encoded_superseded", round_to(superseded / n, 1)},
          {"tokens_prompt", round_to(prompt / n, 1)},
          {"encoded_share", prompt > 0 ? round_to(encoded / prompt, 4) : 0.0},
          {"cache_hit_rate", blocks > 0 ? round_to(reused / blocks, 4) : 0.0},
          {"valid", valid},
          {"agreement", round_to(static_cast<double>(agree) / n, 4)},
          // The same kind of move, a raise of another size included: where
          // agreement is lost to raise sizes rather than to decisions.
          {"agreement_kind", round_to(static_cast<double>(agree_kind) / n, 4)}};
}

}  // namespace

Json match_report(const Match& match) {
  const std::int64_t bb = match.params().table.big_blind;
  const auto& nets = match.nets();
  const auto& seats = match.seats();
  Json report = {{"hands", nets.size()}, {"big_blind", bb}, {"standings", Json::array()}, {"llm", Json::array()}};
  for (std::size_t s = 0; s < seats.size(); ++s) {
    std::vector<double> chips;
    std::int64_t total = 0;
    for (const auto& net : nets) {
      chips.push_back(static_cast<double>(net[s]));
      total += net[s];
    }
    Json row = {{"id", seats[s].info.id}, {"name", seats[s].info.name}, {"kind", seats[s].player->kind()},
                {"net_chips", total}};
    row.update(win_rate(chips, bb));
    report["standings"].push_back(std::move(row));
  }
  for (std::size_t s = 0; s < seats.size(); ++s) {
    if (seats[s].player->kind() != "llm") continue;
    std::vector<const DecisionRecord*> mine;
    std::vector<std::string> modes;
    std::int64_t invalid = 0;
    for (const DecisionRecord& record : match.decisions()) {
      if (record.seat != static_cast<int>(s)) continue;
      mine.push_back(&record);
      invalid += record.decision.invalid;
      for (const ModelSample& sample : record.decision.samples) {
        if (std::find(modes.begin(), modes.end(), sample.mode) == modes.end()) modes.push_back(sample.mode);
      }
    }
    Json vs = Json::array();
    for (std::size_t o = 0; o < seats.size(); ++o) {
      if (o == s) continue;
      std::vector<double> chips;
      for (const auto& net : nets) chips.push_back(won_from(net, s, o));
      Json row = {{"id", seats[o].info.id}, {"kind", seats[o].player->kind()}};
      row.update(win_rate(chips, bb));
      vs.push_back(std::move(row));
    }
    Json per_mode = Json::array();
    for (const std::string& mode : modes) per_mode.push_back(mode_stats(mode, mine));
    report["llm"].push_back({{"id", seats[s].info.id},
                             {"decisions", mine.size()},
                             {"invalid", invalid},
                             {"actions", action_mix(mine)},
                             {"vs_tag", against_reference(mine)},
                             {"vs", std::move(vs)},
                             {"modes", std::move(per_mode)},
                             {"records", decision_records(mine)}});
  }
  return report;
}

std::string report_text(const Json& report) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "\n== %lld hands, big blind %lld ==\n%-4s %-6s %-8s %12s %10s %8s\n",
                static_cast<long long>(report["hands"].get<std::int64_t>()),
                static_cast<long long>(report["big_blind"].get<std::int64_t>()), "seat", "name", "player",
                "net chips", "bb/100", "±95%");
  out += line;
  for (const Json& row : report["standings"]) {
    std::snprintf(line, sizeof line, "%-4s %-6s %-8s %12lld %10.1f %8.1f\n", row["id"].get<std::string>().c_str(),
                  row["name"].get<std::string>().c_str(), row["kind"].get<std::string>().c_str(),
                  static_cast<long long>(row["net_chips"].get<std::int64_t>()), row["bb_per_100"].get<double>(),
                  row["ci95"].get<double>());
    out += line;
  }
  for (const Json& llm : report["llm"]) {
    std::snprintf(line, sizeof line, "\nLLM bot %s: %lld decisions, %lld invalid actions\n",
                  llm["id"].get<std::string>().c_str(), static_cast<long long>(llm["decisions"].get<std::int64_t>()),
                  static_cast<long long>(llm["invalid"].get<std::int64_t>()));
    out += line;
    const Json& mix = llm["actions"];
    std::snprintf(line, sizeof line, "  actions: %d fold, %d check, %d call, %d raise; the tag bot's on %.1f%%\n",
                  mix["fold"].get<int>(), mix["check"].get<int>(), mix["call"].get<int>(), mix["raise"].get<int>(),
                  100 * llm["vs_tag"]["agreement"].get<double>());
    out += line;
    for (const Json& row : llm["vs"]) {
      std::snprintf(line, sizeof line, "  vs %-3s %-8s %8.1f bb/100 ±%.1f\n", row["id"].get<std::string>().c_str(),
                    row["kind"].get<std::string>().c_str(), row["bb_per_100"].get<double>(),
                    row["ci95"].get<double>());
      out += line;
    }
    std::snprintf(line, sizeof line, "  %-7s %9s %9s %9s %9s %9s %9s %7s %7s\n", "mode", "ttft p50", "ttft p99",
                  "total p50", "total p99", "tok enc", "tok full", "hits", "agree");
    out += line;
    for (const Json& m : llm["modes"]) {
      std::snprintf(line, sizeof line, "  %-7s %7.0fms %7.0fms %7.0fms %7.0fms %9.0f %9.0f %6.1f%% %6.1f%%\n",
                    m["mode"].get<std::string>().c_str(), m["ttft_ms"]["p50"].get<double>(),
                    m["ttft_ms"]["p99"].get<double>(), m["total_ms"]["p50"].get<double>(),
                    m["total_ms"]["p99"].get<double>(), m["tokens_encoded"].get<double>(),
                    m["tokens_prompt"].get<double>(), 100 * m["cache_hit_rate"].get<double>(),
                    100 * m["agreement"].get<double>());
      out += line;
    }
  }
  return out;
}

}  // namespace kvframe::examples::holdem
