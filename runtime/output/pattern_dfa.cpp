#include "pattern_dfa.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "pattern_parser.h"

namespace kvframe::runtime::schema {
namespace {

struct NfaInst {
  enum class Op : uint8_t {
    kRange,  // one code point in [lo, hi], then next
    kSplit,  // next and alt both
    kStart,  // holds at the start of the value only
    kEnd,    // holds at its end only
    kMatch,  // the pattern has matched
  };
  Op op = Op::kMatch;
  uint32_t lo = 0, hi = 0;
  int32_t next = -1, alt = -1;
};

// Thrown inside the builders only; compile_pattern turns it into kTooComplex.
struct TooLarge {
  std::string what;
};

// Backwards, compile(node, next) -> entry, like schema_program.cpp.
class NfaBuilder {
 public:
  std::vector<NfaInst> insts;

  int32_t emit(const NfaInst& inst) {
    if (insts.size() >= kMaxPatternInstructions) {
      throw TooLarge{"the pattern compiles to more than " + std::to_string(kMaxPatternInstructions) +
                     " instructions (lower its {m,n} counts)"};
    }
    insts.push_back(inst);
    return static_cast<int32_t>(insts.size() - 1);
  }

  int32_t op(NfaInst::Op o, int32_t next, uint32_t lo = 0, uint32_t hi = 0) {
    NfaInst inst;
    inst.op = o;
    inst.lo = lo;
    inst.hi = hi;
    inst.next = next;
    return emit(inst);
  }

  int32_t split(int32_t a, int32_t b) {
    NfaInst inst;
    inst.op = NfaInst::Op::kSplit;
    inst.next = a;
    inst.alt = b;
    return emit(inst);
  }

  int32_t alternatives(const std::vector<int32_t>& entries) {
    int32_t entry = entries.back();
    for (size_t i = entries.size() - 1; i-- > 0;) entry = split(entries[i], entry);
    return entry;
  }

  int32_t compile(const PatternNode& node, int32_t next) {
    using Kind = PatternNode::Kind;
    switch (node.kind) {
      case Kind::kEmpty:
        return next;
      case Kind::kChars: {
        if (node.ranges.empty()) return op(NfaInst::Op::kRange, next, 1, 0);  // [] matches nothing
        std::vector<int32_t> entries;
        for (const CodePointRange& r : node.ranges) entries.push_back(op(NfaInst::Op::kRange, next, r.lo, r.hi));
        return alternatives(entries);
      }
      case Kind::kSequence:
        for (size_t i = node.children.size(); i-- > 0;) next = compile(node.children[i], next);
        return next;
      case Kind::kAlternation: {
        std::vector<int32_t> entries;
        for (const PatternNode& child : node.children) entries.push_back(compile(child, next));
        return alternatives(entries);
      }
      case Kind::kRepeat:
        return repeat(node, next);
      case Kind::kStart:
        return op(NfaInst::Op::kStart, next);
      case Kind::kEnd:
        return op(NfaInst::Op::kEnd, next);
    }
    return next;
  }

  // The mandatory copies, then the optional ones (nested, so "two more"
  // needs "one more" first) or a loop.
  int32_t repeat(const PatternNode& node, int32_t next) {
    const PatternNode& body = node.children.front();
    int32_t at = next;
    if (node.max == kUnbounded) {
      const int32_t loop = split(-1, next);  // next patched below: the body, back to here
      insts[static_cast<size_t>(loop)].next = compile(body, loop);
      at = loop;
    } else {
      for (int64_t k = node.min; k < node.max; ++k) at = split(compile(body, at), at);
    }
    for (int64_t k = 0; k < node.min; ++k) at = compile(body, at);
    return at;
  }
};

bool is_surrogate(uint32_t code_point) { return code_point >= 0xD800 && code_point <= 0xDFFF; }

// Subset construction. A state is the sorted set of NFA threads waiting on
// a code point (kRange) or on the end (kEnd), and whether it is the start
// (where ^ holds). A set holding kMatch is the one "matched" state.
class Determinizer {
 public:
  Determinizer(const std::vector<NfaInst>& insts, int32_t start, int32_t match)
      : insts_(insts), match_(match), mark_(insts.size(), 0) {
    for (const NfaInst& inst : insts) {
      if (inst.op != NfaInst::Op::kRange || inst.lo > inst.hi) continue;
      cuts_.push_back(inst.lo);
      if (inst.hi < kMaxCodePoint) cuts_.push_back(inst.hi + 1);
    }
    for (uint32_t cut : {0u, 0xD800u, 0xE000u}) cuts_.push_back(cut);
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    intern(closure({start}, true, false), true);  // state 0
  }

  PatternDfa run() {
    PatternDfa dfa;
    dfa.interval_starts = cuts_;
    const size_t intervals = cuts_.size();
    for (size_t s = 0; s < sets_.size(); ++s) {  // sets_ grows as states are found
      if ((s + 1) * intervals > kMaxPatternTransitions) {
        throw TooLarge{"the pattern's automaton exceeds " + std::to_string(kMaxPatternTransitions) +
                       " transitions (fewer distinct characters and classes, or fewer states)"};
      }
      dfa.next.resize((s + 1) * intervals, PatternDfa::kNone);
      const bool matched = sets_[s].second.size() == 1 && sets_[s].second.front() == match_;
      std::map<Threads, int32_t> by_seeds;  // most intervals move the same threads: one closure each
      for (size_t i = 0; i < intervals; ++i) {
        if (is_surrogate(cuts_[i])) continue;
        int32_t to = static_cast<int32_t>(s);
        if (!matched) to = advance(s, cuts_[i], by_seeds);
        dfa.next[s * intervals + i] = to;
      }
    }
    for (const auto& set : sets_) {
      const std::vector<int32_t> at_end = closure(set.second, set.first, true);
      dfa.accepting.push_back(std::find(at_end.begin(), at_end.end(), match_) != at_end.end());
    }
    return dfa;
  }

 private:
  using Threads = std::vector<int32_t>;

  void count_steps(int64_t n) {
    steps_ += n;
    if (steps_ > kMaxPatternSteps) throw TooLarge{"the pattern is too large to determinize: simplify it"};
  }

  // The threads `seeds` lead to without consuming anything.
  Threads closure(const Threads& seeds, bool at_start, bool at_end) {
    ++stamp_;
    Threads out;
    std::vector<int32_t> stack(seeds.rbegin(), seeds.rend());
    while (!stack.empty()) {
      const int32_t pc = stack.back();
      stack.pop_back();
      count_steps(1);
      if (mark_[static_cast<size_t>(pc)] == stamp_) continue;
      mark_[static_cast<size_t>(pc)] = stamp_;
      const NfaInst& inst = insts_[static_cast<size_t>(pc)];
      switch (inst.op) {
        case NfaInst::Op::kSplit:
          stack.push_back(inst.alt);
          stack.push_back(inst.next);
          break;
        case NfaInst::Op::kStart:
          if (at_start) stack.push_back(inst.next);
          break;
        case NfaInst::Op::kEnd:
          if (at_end) {
            stack.push_back(inst.next);
          } else {
            out.push_back(pc);
          }
          break;
        default:
          out.push_back(pc);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  int32_t advance(size_t state, uint32_t code_point, std::map<Threads, int32_t>& by_seeds) {
    count_steps(static_cast<int64_t>(sets_[state].second.size()));
    Threads seeds;
    for (int32_t pc : sets_[state].second) {
      const NfaInst& inst = insts_[static_cast<size_t>(pc)];
      if (inst.op == NfaInst::Op::kRange && code_point >= inst.lo && code_point <= inst.hi) seeds.push_back(inst.next);
    }
    if (seeds.empty()) return PatternDfa::kNone;
    const auto known = by_seeds.find(seeds);
    if (known != by_seeds.end()) return known->second;
    const int32_t to = intern(closure(seeds, false, false), false);
    by_seeds.emplace(std::move(seeds), to);
    return to;
  }

  int32_t intern(Threads threads, bool at_start) {
    if (std::find(threads.begin(), threads.end(), match_) != threads.end()) {
      threads = {match_};  // matched: what follows no longer matters
      at_start = false;
    }
    auto key = std::make_pair(at_start, std::move(threads));
    const auto found = ids_.find(key);
    if (found != ids_.end()) return found->second;
    if (sets_.size() >= static_cast<size_t>(kMaxPatternStates)) {
      throw TooLarge{"the pattern's automaton exceeds " + std::to_string(kMaxPatternStates) +
                     " states (a repeat after a wildcard, such as .*a.{20}, multiplies them)"};
    }
    const auto id = static_cast<int32_t>(sets_.size());
    ids_.emplace(key, id);
    sets_.push_back(std::move(key));
    return id;
  }

  const std::vector<NfaInst>& insts_;
  int32_t match_;
  std::vector<uint32_t> cuts_;
  std::vector<std::pair<bool, Threads>> sets_;
  std::map<std::pair<bool, Threads>, int32_t> ids_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  int64_t steps_ = 0;
};

// States from which no accepting one is reachable become kNone, so a dead
// end is known the moment it is entered. False when the start is one.
bool prune_dead_ends(PatternDfa& dfa) {
  const auto n = static_cast<size_t>(dfa.states());
  const auto intervals = static_cast<size_t>(dfa.intervals());
  std::vector<std::vector<int32_t>> sources(n);
  for (size_t s = 0; s < n; ++s) {
    for (size_t i = 0; i < intervals; ++i) {
      const int32_t to = dfa.next[s * intervals + i];
      if (to != PatternDfa::kNone) sources[static_cast<size_t>(to)].push_back(static_cast<int32_t>(s));
    }
  }
  std::vector<uint8_t> live(dfa.accepting.begin(), dfa.accepting.end());
  std::vector<int32_t> stack;
  for (size_t s = 0; s < n; ++s) {
    if (live[s]) stack.push_back(static_cast<int32_t>(s));
  }
  while (!stack.empty()) {
    const int32_t s = stack.back();
    stack.pop_back();
    for (int32_t from : sources[static_cast<size_t>(s)]) {
      if (!live[static_cast<size_t>(from)]) {
        live[static_cast<size_t>(from)] = 1;
        stack.push_back(from);
      }
    }
  }
  for (int32_t& to : dfa.next) {
    if (to != PatternDfa::kNone && !live[static_cast<size_t>(to)]) to = PatternDfa::kNone;
  }
  return live[0] != 0;
}

}  // namespace

int32_t PatternDfa::interval_of(uint32_t code_point) const {
  const auto after = std::upper_bound(interval_starts.begin(), interval_starts.end(), code_point);
  return static_cast<int32_t>(after - interval_starts.begin()) - 1;
}

uint32_t PatternDfa::interval_last(int32_t interval) const {
  const auto i = static_cast<size_t>(interval);
  return i + 1 < interval_starts.size() ? interval_starts[i + 1] - 1 : kMaxCodePoint;
}

bool PatternDfa::matches(std::string_view utf8) const {
  std::vector<uint32_t> code_points;
  if (!utf8_code_points(utf8, code_points)) return false;
  int32_t state = 0;
  for (uint32_t cp : code_points) {
    state = step(state, cp);
    if (state == kNone) return false;
  }
  return accepting[static_cast<size_t>(state)] != 0;
}

SchemaResult<std::shared_ptr<const PatternDfa>> compile_pattern(std::string_view pattern) {
  auto tree = parse_pattern(pattern);
  if (!tree) return tree.error();
  try {
    NfaBuilder nfa;
    const int32_t match = nfa.op(NfaInst::Op::kMatch, -1);
    const int32_t entry = nfa.compile(*tree, match);
    // The implicit [\s\S]* before the pattern: any code point, back to here.
    const int32_t search = nfa.split(-1, entry);
    nfa.insts[static_cast<size_t>(search)].next = nfa.op(NfaInst::Op::kRange, search, 0, kMaxCodePoint);
    auto dfa = std::make_shared<PatternDfa>(Determinizer(nfa.insts, search, match).run());
    if (!prune_dead_ends(*dfa)) return schema_error(ErrorCode::kSchemaInvalid, "the pattern matches no string", "");
    return std::shared_ptr<const PatternDfa>(std::move(dfa));
  } catch (const TooLarge& e) {
    return schema_error(ErrorCode::kSchemaTooComplex, e.what, "");
  }
}

}  // namespace kvframe::runtime::schema
