// The replay viewer: one self-contained HTML page (inline CSS and
// JavaScript, no external assets, no network) that replays a match.
//
//   write_replay_html("match.html", record_json);   // record: the format below
//
// The page draws the table (seats, stacks, bets, pot), the cards (hole cards
// face up, as a replay shows them; board), the action log, the commentary,
// and a per-decision latency chart of the LLM bot for every mode run. Keys:
// ←/→ step, ↑/↓ hand; buttons do the same. The URL fragment picks a spot:
// `#hand=3&step=7` (1-based hand, 0-based step), and `#autoplay` steps
// through on a timer. The page exposes what it draws for tests:
// `document.body.dataset` gets hand, step, steps, and the DOM element
// `#status` a one-line summary ("hand 3/30 · step 7/19 · flop · pot 120").
//
// The record (a JSON object; kvframe-holdem writes it, and --json prints the
// same "report"):
//   {"title": "kvframe-holdem · seed 7 · 30 hands",
//    "seed": 7, "big_blind": 10, "modes": ["block", "full"],
//    "players": [{"id": "p1", "name": "Ada", "kind": "llm"}, ...],
//    "hands": [{
//       "number": 1, "id": "hand_0001", "button": 0,
//       "start_stacks": [1000, ...], "hole": [["Ah","Kd"], ...],
//       "steps": [                                    one per thing that happens
//         {"kind": "deal", "street": "preflop", "board": [], "pot": 0,
//          "stacks": [...], "bets": [...], "folded": [false, ...], "text": "hand_0001, p1 on the button"},
//         {"kind": "action", "seat": 2, "street": "preflop", "action": "raise",
//          "amount": 30, "pot": 45, "stacks": [...], "bets": [...], "folded": [...],
//          "text": "p3 raise 30", "decision": 0},    index into "decisions", or absent
//         {"kind": "street", "street": "flop", "board": ["Ah","7c","2d"], ...same fields},
//         {"kind": "comment", "text": "p3 opens ...", ...same fields},
//         {"kind": "result", "text": "p3 wins 120 with two pair", "winners": [2], ...same fields}],
//       "net": [-10, 30, ...]}],
//    "decisions": [{"hand": 1, "seat": 0, "street": "flop", "action": "call",
//                   "samples": {"block": {"ttft_ms": 95.1, "total_ms": 410.2, "tokens_encoded": 84,
//                                         "tokens_prompt": 3120, "tokens_encoded_superseded": 0,
//                                         "answer": "{...}", "valid": true},
//                               "full": {...}},
//                   "agree": true}],               every mode chose the played action
//    "report": {...}}                              the final report (kvframe-holdem --json)
#pragma once

#include <string>

namespace kvframe::examples::holdem {

// The page for `record_json` (the format above). The record is embedded as
// JSON inside a <script type="application/json"> element, with "</" escaped
// so no text in it can close the element.
std::string replay_html(const std::string& record_json);

// Writes replay_html(record_json) to `path`; throws std::runtime_error naming
// the path when it cannot be written.
void write_replay_html(const std::string& path, const std::string& record_json);

}  // namespace kvframe::examples::holdem
