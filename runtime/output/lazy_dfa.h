// The lazy DFA over a schema's program (RE2's idea): a state is the sorted
// set of NFA threads (pc + leaf payload) after following every split,
// interned to an id; transitions are computed the first time a (state, byte)
// pair is asked for and memoized in a 256-entry row per state.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "schema_program.h"

namespace kvframe::runtime::schema {

class LazyDfa {
 public:
  static constexpr int32_t kDead = 0;  // the empty set: no byte keeps the text valid

  // `program` must outlive the DFA.
  LazyDfa(const Program& program, const ByteSet& single);

  int32_t start() const { return start_; }
  int32_t next(int32_t state, uint8_t byte) {
    const size_t at = static_cast<size_t>(state) * 256 + byte;
    if (int32_t known = transitions_[at]; known != kUnknown) return known;
    const int32_t computed = compute(state, byte);
    transitions_[at] = computed;
    return computed;
  }
  // The fewest bytes to a complete value, one single-byte token each (kInf if none).
  int32_t min_bytes(int32_t state) const { return states_[static_cast<size_t>(state)].min_bytes; }
  bool accepting(int32_t state) const { return states_[static_cast<size_t>(state)].accepting; }
  // Accepting, and no byte may follow.
  bool finished(int32_t state) const { return states_[static_cast<size_t>(state)].finished; }
  int64_t size() const { return static_cast<int64_t>(states_.size()); }

  // A state that is one string's content at a character boundary and
  // nothing else (free text, without a pattern): its mask goes by code
  // point counts.
  struct StringBoundary {
    const StringSpec* spec;
    uint64_t payload;
    int32_t after;  // bytes from the closing quote's continuation to the end
  };
  bool string_boundary(int32_t state, StringBoundary& out) const;

 private:
  static constexpr int32_t kUnknown = -1;
  struct Thread {
    uint64_t payload;  // string: json_leaves' packed payload; number: an id into number_texts_
    int32_t pc;
    int32_t unused = 0;  // keeps the struct free of padding: states are interned by their bytes
  };
  struct State {
    size_t begin, end;  // threads in pool_
    int32_t min_bytes;
    bool accepting, finished;
  };

  int32_t compute(int32_t state, uint8_t byte);
  void add(int32_t pc, uint64_t payload);  // a thread and everything its splits reach
  void add_number(int32_t pc, uint32_t text_id);
  int32_t intern();                          // scratch_ -> state id
  uint32_t intern_number(std::string text);
  int32_t thread_min_bytes(const Thread& t) const;

  const Program& program_;
  const ByteSet& single_;
  std::vector<Thread> pool_;
  std::vector<State> states_;
  std::vector<int32_t> transitions_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> number_texts_;
  std::unordered_map<std::string, uint32_t> number_ids_;
  // Per-computation scratch: the set being built, pcs already expanded, a work stack.
  std::vector<Thread> scratch_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  std::vector<std::pair<int32_t, uint64_t>> stack_;
  int32_t start_ = kDead;
};

}  // namespace kvframe::runtime::schema
