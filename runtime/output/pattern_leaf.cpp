#include "pattern_leaf.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <utility>

#include "json_chars.h"

namespace kvframe::runtime::schema {
namespace {

// The payload: code points begun (24 bits: the table bounds the counts far
// below that), the pattern's state (16 bits: kMaxPatternStates is below
// that) and where inside a character the text is.
struct Position {
  int64_t count;
  int32_t state;
  CharState chr;
};
static_assert(kMaxPatternTable < (int64_t{1} << 24) && kMaxPatternStates < (1 << 16), "the payload's fields");

Position position_of(uint64_t p) {
  return {static_cast<int64_t>(p & 0xFFFFFF), static_cast<int32_t>((p >> 24) & 0xFFFF),
          {static_cast<CharSub>((p >> 40) & 0xFF), static_cast<uint16_t>(p >> 48)}};
}

uint64_t payload_of(const Position& p) {
  return static_cast<uint64_t>(p.count) | (static_cast<uint64_t>(p.state) << 24) | (uint64_t{p.chr.sub} << 40) |
         (uint64_t{p.chr.value} << 48);
}

int32_t bytes_sum(int32_t a, int32_t b) { return std::min(kInf, a + b); }

// The pattern's transitions with their byte costs, one per distinct target
// (the cheapest of the intervals that lead there).
struct Edge {
  int32_t to, bytes;
};

std::vector<std::vector<Edge>> cheapest_edges(const PatternLeaf& leaf) {
  const PatternDfa& dfa = *leaf.dfa;
  std::vector<std::vector<Edge>> edges(static_cast<size_t>(dfa.states()));
  for (int32_t s = 0; s < dfa.states(); ++s) {
    auto& out = edges[static_cast<size_t>(s)];
    for (int32_t i = 0; i < dfa.intervals(); ++i) {
      const int32_t to = dfa.target(s, i);
      const int32_t bytes = leaf.interval_bytes[static_cast<size_t>(i)];
      if (to == PatternDfa::kNone || bytes >= kInf) continue;
      const auto known = std::find_if(out.begin(), out.end(), [&](const Edge& e) { return e.to == to; });
      if (known == out.end()) {
        out.push_back({to, bytes});
      } else {
        known->bytes = std::min(known->bytes, bytes);
      }
    }
  }
  return edges;
}

// The top count's row without a maxLength: the count stays there, so the
// row refers to itself; Dijkstra backwards from the accepting states.
void fill_saturated_row(const PatternLeaf& leaf, const std::vector<std::vector<Edge>>& edges, int32_t* row) {
  const int32_t n = leaf.dfa->states();
  std::vector<std::vector<Edge>> into(static_cast<size_t>(n));
  for (int32_t s = 0; s < n; ++s) {
    for (const Edge& e : edges[static_cast<size_t>(s)]) into[static_cast<size_t>(e.to)].push_back({s, e.bytes});
  }
  using Entry = std::pair<int32_t, int32_t>;  // (bytes, state)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (int32_t s = 0; s < n; ++s) {
    row[s] = leaf.dfa->accepting[static_cast<size_t>(s)] ? 1 : kInf;  // the closing quote
    if (row[s] < kInf) queue.emplace(row[s], s);
  }
  while (!queue.empty()) {
    const auto [bytes, s] = queue.top();
    queue.pop();
    if (bytes > row[s]) continue;
    for (const Edge& e : into[static_cast<size_t>(s)]) {
      const int32_t via = bytes_sum(bytes, e.bytes);
      if (via < row[e.to]) {
        row[e.to] = via;
        queue.emplace(via, e.to);
      }
    }
  }
}

// The fewest bytes of `writable` to the end of the string: everything a
// character begun in `p` can become, each with what follows it.
int32_t completion(const PatternLeaf& leaf, const Position& p, const ByteSet& writable) {
  if (p.chr.sub == kNormal) return leaf.remaining_at(p.count, p.state);
  const PatternDfa& dfa = *leaf.dfa;
  const CodePointHull hull = reachable_hull(p.chr);
  int32_t best = kInf;
  for (int32_t i = dfa.interval_of(hull.lo); i < dfa.intervals(); ++i) {
    const uint32_t first = dfa.interval_starts[static_cast<size_t>(i)];
    if (first > hull.hi) break;
    const int32_t to = dfa.target(p.state, i);
    if (to == PatternDfa::kNone) continue;
    const int32_t rest = leaf.remaining_at(p.count, to);  // the count already holds this character
    if (bytes_sum(rest, 1) >= best) continue;             // the character needs a byte at least
    const uint32_t lo = std::max(first, hull.lo);
    const uint32_t hi = std::min(dfa.interval_last(i), hull.hi);
    best = std::min(best, bytes_sum(cheapest_char(p.chr, lo, hi, writable), rest));
  }
  return best;
}

}  // namespace

SchemaResult<std::shared_ptr<const PatternLeaf>> make_pattern_leaf(std::shared_ptr<const PatternDfa> dfa, int64_t min,
                                                                   int64_t max, const ByteSet& single) {
  auto leaf = std::make_shared<PatternLeaf>();
  leaf->dfa = std::move(dfa);
  leaf->min = min;
  leaf->max = max;
  leaf->top_count = max == kUnbounded ? min : max;
  leaf->single = single;
  const PatternDfa& d = *leaf->dfa;
  for (int32_t i = 0; i < d.intervals(); ++i) {
    leaf->interval_bytes.push_back(cheapest_char(CharState{}, d.interval_starts[static_cast<size_t>(i)],
                                                 d.interval_last(i), single));
  }
  const auto edges = cheapest_edges(*leaf);
  int64_t transitions = 0;
  for (const auto& out : edges) transitions += static_cast<int64_t>(out.size());
  const int64_t rows = leaf->top_count + 1;
  if (rows > kMaxPatternTable / d.states() || rows > kMaxPatternWork / std::max<int64_t>(transitions, 1)) {
    const std::string length =
        max == kUnbounded ? "minLength " + std::to_string(min) : "maxLength " + std::to_string(max);
    return schema_error(ErrorCode::kSchemaTooComplex,
                        "a pattern of " + std::to_string(d.states()) + " states with " + length +
                            " is too large to constrain: lower the length or simplify the pattern",
                        "");
  }

  const auto states = static_cast<size_t>(d.states());
  leaf->remaining.assign(static_cast<size_t>(rows) * states, kInf);
  int32_t* top = &leaf->remaining[static_cast<size_t>(leaf->top_count) * states];
  if (max == kUnbounded) {
    fill_saturated_row(*leaf, edges, top);
  } else {
    for (size_t s = 0; s < states; ++s) top[s] = d.accepting[s] ? 1 : kInf;  // maxLength reached: only the quote
  }
  for (int64_t count = leaf->top_count - 1; count >= 0; --count) {
    int32_t* row = &leaf->remaining[static_cast<size_t>(count) * states];
    const int32_t* after = row + states;  // count + 1
    for (size_t s = 0; s < states; ++s) {
      int32_t best = d.accepting[s] && count >= min ? 1 : kInf;
      for (const Edge& e : edges[s]) best = std::min(best, bytes_sum(e.bytes, after[e.to]));
      row[s] = best;
    }
  }
  if (leaf->remaining_at(0, 0) >= kInf) {
    return schema_error(ErrorCode::kSchemaInvalid,
                        "no string within minLength / maxLength matches the pattern", "");
  }
  return std::shared_ptr<const PatternLeaf>(std::move(leaf));
}

LeafStep pattern_step(const PatternLeaf& leaf, uint64_t& payload, uint8_t byte) {
  Position p = position_of(payload);
  if (p.chr.sub == kNormal) {
    if (byte == '"') {
      return leaf.dfa->accepting[static_cast<size_t>(p.state)] && p.count >= leaf.min ? LeafStep::kExit
                                                                                      : LeafStep::kDead;
    }
    if (leaf.max != kUnbounded && p.count >= leaf.max) return LeafStep::kDead;
    p.count = leaf.count_after(p.count);
  }
  uint32_t code_point = 0;
  switch (char_step(p.chr, byte, code_point)) {
    case CharStep::kChar:
      p.state = leaf.dfa->step(p.state, code_point);
      if (p.state == PatternDfa::kNone) return LeafStep::kDead;
      break;
    case CharStep::kPartial:
      break;
    default:
      return LeafStep::kDead;
  }
  // Cut dead ends at once: a thread that can no longer finish would only
  // split states that behave alike. Any byte counts here, not only those
  // with single-byte tokens: a longer token may finish the character.
  static const ByteSet kAnyByte = ByteSet().set();
  if (completion(leaf, p, kAnyByte) >= kInf) return LeafStep::kDead;
  payload = payload_of(p);
  return LeafStep::kStay;
}

int32_t pattern_min_completion(const PatternLeaf& leaf, uint64_t payload) {
  return completion(leaf, position_of(payload), leaf.single);
}

}  // namespace kvframe::runtime::schema
