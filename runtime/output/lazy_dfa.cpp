#include "lazy_dfa.h"

#include <algorithm>
#include <cstring>

#include "json_leaves.h"

namespace kvframe::runtime::schema {

LazyDfa::LazyDfa(const Program& program, const ByteSet& single)
    : program_(program), single_(single), mark_(program.insts.size(), 0) {
  number_texts_.emplace_back();  // id 0: "", the number not yet begun
  number_ids_.emplace("", 0);
  scratch_.clear();
  intern();  // kDead
  ++stamp_;
  add(program.start, 0);
  start_ = intern();
}

namespace {

const NumberSpec& number_spec(const Program& program, int32_t pc) {
  return program.numbers[static_cast<size_t>(program.insts[static_cast<size_t>(pc)].leaf)];
}

}  // namespace

bool LazyDfa::string_boundary(int32_t state, StringBoundary& out) const {
  const State& s = states_[static_cast<size_t>(state)];
  if (s.end - s.begin != 1) return false;
  const Thread& t = pool_[s.begin];
  const Inst& inst = program_.insts[static_cast<size_t>(t.pc)];
  if (inst.op != Inst::Op::kString) return false;
  const StringSpec& spec = program_.strings[static_cast<size_t>(inst.leaf)];
  // With a pattern, which characters may come depends on its state, not on counts alone.
  if (spec.pattern || !string_at_boundary(t.payload)) return false;
  out = {&spec, t.payload, program_.distance[static_cast<size_t>(inst.next)]};
  return true;
}

void LazyDfa::add_number(int32_t pc, uint32_t text_id) {
  const NumberOutlook outlook = number_outlook(number_spec(program_, pc), number_texts_[text_id]);
  if (outlook.can_extend) scratch_.push_back({text_id, pc});
  if (outlook.min_added == 0) stack_.emplace_back(program_.insts[static_cast<size_t>(pc)].next, 0);
}

void LazyDfa::add(int32_t pc, uint64_t payload) {
  stack_.emplace_back(pc, payload);
  while (!stack_.empty()) {
    const auto [at, p] = stack_.back();
    stack_.pop_back();
    const Inst& inst = program_.insts[static_cast<size_t>(at)];
    switch (inst.op) {
      case Inst::Op::kString:
        scratch_.push_back({p, at});
        break;
      case Inst::Op::kNumber:
        add_number(at, static_cast<uint32_t>(p));
        break;
      default:
        // Payload-free instructions: each expands once per computation.
        if (mark_[static_cast<size_t>(at)] == stamp_) break;
        mark_[static_cast<size_t>(at)] = stamp_;
        if (inst.op == Inst::Op::kSplit) {
          stack_.emplace_back(inst.alt, 0);
          stack_.emplace_back(inst.next, 0);
        } else {
          scratch_.push_back({0, at});
        }
    }
  }
}

uint32_t LazyDfa::intern_number(std::string text) {
  const auto [it, inserted] = number_ids_.emplace(std::move(text), static_cast<uint32_t>(number_texts_.size()));
  if (inserted) number_texts_.push_back(it->first);
  return it->second;
}

int32_t LazyDfa::compute(int32_t state, uint8_t byte) {
  scratch_.clear();
  ++stamp_;
  const State& s = states_[static_cast<size_t>(state)];
  for (size_t i = s.begin; i < s.end; ++i) {
    const Thread t = pool_[i];
    const Inst& inst = program_.insts[static_cast<size_t>(t.pc)];
    switch (inst.op) {
      case Inst::Op::kByte:
        if (byte >= inst.lo && byte <= inst.hi) add(inst.next, 0);
        break;
      case Inst::Op::kString: {
        uint64_t payload = t.payload;
        const LeafStep step = string_step(program_.strings[static_cast<size_t>(inst.leaf)], payload, byte);
        if (step == LeafStep::kStay) scratch_.push_back({payload, t.pc});
        if (step == LeafStep::kExit) add(inst.next, 0);
        break;
      }
      case Inst::Op::kNumber: {
        const NumberSpec& spec = program_.numbers[static_cast<size_t>(inst.leaf)];
        std::string text = number_texts_[static_cast<size_t>(t.payload)] + static_cast<char>(byte);
        if (!number_syntax_ok(spec, text) || number_outlook(spec, text).min_added >= kInf) break;
        add(t.pc, intern_number(std::move(text)));
        break;
      }
      default:
        break;
    }
  }
  // s may dangle once intern() grows states_.
  return intern();
}

int32_t LazyDfa::thread_min_bytes(const Thread& t) const {
  const Inst& inst = program_.insts[static_cast<size_t>(t.pc)];
  const auto after = [&](int32_t own) {
    return std::min(kInf, own + program_.distance[static_cast<size_t>(inst.next)]);
  };
  switch (inst.op) {
    case Inst::Op::kString:
      return after(string_min_completion(program_.strings[static_cast<size_t>(inst.leaf)], t.payload, single_));
    case Inst::Op::kNumber:
      return after(number_outlook(number_spec(program_, t.pc), number_texts_[static_cast<size_t>(t.payload)]).min_added);
    default:
      return program_.distance[static_cast<size_t>(t.pc)];
  }
}

int32_t LazyDfa::intern() {
  std::sort(scratch_.begin(), scratch_.end(), [](const Thread& a, const Thread& b) {
    return a.pc != b.pc ? a.pc < b.pc : a.payload < b.payload;
  });
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end(),
                             [](const Thread& a, const Thread& b) { return a.pc == b.pc && a.payload == b.payload; }),
                 scratch_.end());
  std::string key(scratch_.size() * sizeof(Thread), '\0');
  if (!scratch_.empty()) std::memcpy(key.data(), scratch_.data(), key.size());
  const auto [it, inserted] = ids_.emplace(std::move(key), static_cast<int32_t>(states_.size()));
  if (!inserted) return it->second;

  State s{pool_.size(), pool_.size() + scratch_.size(), kInf, false, false};
  bool only_match = !scratch_.empty();
  for (const Thread& t : scratch_) {
    s.min_bytes = std::min(s.min_bytes, thread_min_bytes(t));
    const bool is_match = program_.insts[static_cast<size_t>(t.pc)].op == Inst::Op::kMatch;
    s.accepting = s.accepting || is_match;
    only_match = only_match && is_match;
  }
  s.finished = only_match;
  pool_.insert(pool_.end(), scratch_.begin(), scratch_.end());
  states_.push_back(s);
  transitions_.resize(transitions_.size() + 256, kUnknown);
  return it->second;
}

}  // namespace kvframe::runtime::schema
