// The match report: standings in bb/100 with confidence intervals, the LLM
// bot's results against each other player, and its decisions per attention
// mode (latency p50/p99 to the first token and in total, tokens encoded
// against a full prefill, cache hits, invalid actions, agreement between modes).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "holdem/simulator/match.h"

namespace kvframe::examples::holdem {

// The report as JSON (what --json prints and the replay page shows):
//   {"hands": 500, "big_blind": 10,
//    "standings": [{"id": "p1", "name": "Ada", "kind": "llm", "net_chips": 1234,
//                   "bb_per_100": 24.7, "ci95": 18.2}, ...],           ci95: half-width
//    "llm": [{"id": "p1", "decisions": 812, "invalid": 0,
//             "actions": {"fold": 300, "check": 250, "call": 150, "raise": 112},
//             "vs_tag": {"decisions": 812, "agreement": 0.81,              the tight-aggressive bot's
//                        "matrix": {"fold": {"fold": 280, "check": 0, ...}, ...}},  action, then the LLM's
//             "vs": [{"id": "p2", "kind": "tag", "bb_per_100": -3.1, "ci95": 9.0}, ...],
//             "modes": [{"mode": "block", "ttft_ms": {"p50": .., "p99": ..},
//                        "total_ms": {"p50": .., "p99": ..}, "tokens_encoded": 84.2,
//                        "tokens_prompt": 3120.5, "encoded_share": 0.027,
//                        "cache_hit_rate": 0.99, "valid": 812,
//                        "agreement": 1.0}, ...]}]}                   agreement: with the played mode
nlohmann::ordered_json match_report(const Match& match);

// The report as the table people read at the end of a match.
std::string report_text(const nlohmann::ordered_json& report);

}  // namespace kvframe::examples::holdem
