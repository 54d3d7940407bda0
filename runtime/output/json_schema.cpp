// Schema-constrained decoding (json_schema.h). The pipeline, one file each:
//
//   schema_parser.cpp   JSON Schema (simdjson DOM) -> node tree, keyword checks
//   pattern_parser.cpp  a `pattern` (ECMA-262 subset) -> syntax tree
//   pattern_dfa.cpp     ... -> Thompson NFA -> DFA over code point intervals
//   schema_program.cpp  node tree -> byte-level NFA program, built backwards
//   json_leaves.cpp     string content and bounded numbers: exact leaf automata
//   json_chars.cpp      JSON string text -> characters (UTF-8, escapes), byte by byte
//   pattern_leaf.cpp    string content under a pattern: its DFA stepped per character
//   lazy_dfa.cpp        thread sets -> interned DFA states, memoized transitions
//   token_masks.cpp     the vocabulary's byte trie; a state's mask is one walk
//   json_schema.cpp     this file: compile_schema, the budget guard, JsonConstraint
//   schema_cache.cpp    compiled schemas by text
//
// What we took from whom:
// - llama.cpp's grammars (GBNF): a pushdown automaton kept as a set of parse
//   stacks, advanced code point by code point, each candidate token checked
//   against every stack at every step (its sampler can also sample first and
//   check only the sampled token). We took none of that machinery: without
//   recursion the language is regular, so no stacks, and a cached mask is
//   cheaper than any per-step check. Its partial-UTF-8 state (tokens may end
//   inside a character) is the idea behind our string leaf's payload.
// - Outlines: regex -> DFA -> an index of the allowed tokens per DFA state.
//   Taken, but built lazily: a state's DFA row and its mask are computed the
//   first time a decoding reaches it, since a game's schema changes every
//   frame and an eager index over all states would cost more than decoding.
// - XGrammar: token masks precomputed per automaton position, a trie over
//   the sorted vocabulary so shared prefixes are matched once, and a
//   persistent matcher state per decoding. Taken: masks per DFA state,
//   cached in the compiled schema; the vocabulary trie; JsonConstraint is
//   that persistent state. XGrammar splits tokens into context-independent
//   ones (decidable from the position alone, precomputed) and
//   context-dependent ones (needing the stack); ours are all
//   context-independent because the language is regular.
// Ours: the budget guard. Each DFA state knows the fewest bytes to a
// complete value (one printable single-byte token each), so allowed(budget)
// only offers tokens after which the rest still fits: output that follows
// the masks is complete within max_tokens whenever min_tokens() fits.
// And a shortcut for free text (in the spirit of XGrammar's split): tokens
// that are plain string content are classified once per vocabulary by their
// code point count, so a string state's mask is a few bitset ORs plus a
// walk over the few hundred tokens that are not (quotes, escapes, partial
// UTF-8), instead of a walk over the whole trie.
#include "kvframe/runtime_output/json_schema.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <set>

#include "lazy_dfa.h"
#include "pattern_leaf.h"
#include "schema_parser.h"
#include "schema_program.h"
#include "token_masks.h"

namespace kvframe::runtime {

using schema::kInf;
using schema::LazyDfa;

std::string SchemaError::to_string() const {
  std::string out = error_code_name(code);
  out += " at '";
  out += path;
  out += "': ";
  out += message;
  return out;
}

Error SchemaError::to_error() const { return Error{code, "output schema at '" + path + "': " + message}; }

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

struct CompiledSchema::Impl {
  struct StateMask {
    TokenMask mask;
    int32_t max_next_need = 0;  // the budget below which the mask must be filtered
  };

  std::shared_ptr<const TokenVocabulary> vocab;
  schema::Program program;
  std::unique_ptr<LazyDfa> dfa;     // over `program`, which therefore never moves
  std::vector<int32_t> mask_of;     // DFA state -> index in masks, -1 until computed
  std::deque<StateMask> masks;      // a deque: references handed out stay valid
  std::map<std::pair<int32_t, int32_t>, TokenMask> budget_masks;  // (state, bytes left after the token)
  TokenMask no_tokens;
  CompiledSchema::Stats stats;

  void count_mask(const TokenMask& mask, std::chrono::steady_clock::time_point started) {
    stats.mask_ms += ms_since(started);
    ++stats.masks;
    stats.mask_bytes += static_cast<int64_t>(mask.ids().size() * sizeof(int32_t) +
                                             (static_cast<size_t>(vocab->size()) + 63) / 64 * sizeof(uint64_t));
  }

  const StateMask& state_mask(int32_t state) {
    if (static_cast<size_t>(state) >= mask_of.size()) mask_of.resize(static_cast<size_t>(dfa->size()), -1);
    int32_t& index = mask_of[static_cast<size_t>(state)];
    if (index < 0) {
      const auto start = std::chrono::steady_clock::now();
      schema::MaskResult walked = schema::walk_mask(vocab->impl(), *dfa, state, kInf - 1);
      StateMask entry;
      entry.mask = std::move(walked.mask);
      entry.max_next_need = walked.max_next_need;
      count_mask(entry.mask, start);
      masks.push_back(std::move(entry));
      index = static_cast<int32_t>(masks.size() - 1);  // mask_of is only resized above, so `index` is still valid
      return masks.back();
    }
    return masks[static_cast<size_t>(index)];
  }

  // The tokens after which at most `left` bytes (= tokens) are needed.
  const TokenMask& allowed(int32_t state, int32_t budget) {
    const int32_t left = std::max(budget, 1) - 1;
    const StateMask& full = state_mask(state);
    if (left >= full.max_next_need) return full.mask;
    const auto key = std::make_pair(state, left);
    if (auto it = budget_masks.find(key); it != budget_masks.end()) return it->second;
    const auto start = std::chrono::steady_clock::now();
    schema::MaskResult walked = schema::walk_mask(vocab->impl(), *dfa, state, left);
    TokenMask& mask = budget_masks[key];
    mask = std::move(walked.mask);
    count_mask(mask, start);
    return mask;
  }
};

CompiledSchema::CompiledSchema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CompiledSchema::~CompiledSchema() = default;

int32_t CompiledSchema::min_tokens() const { return impl_->dfa->min_bytes(impl_->dfa->start()); }

CompiledSchema::Stats CompiledSchema::stats() const {
  Stats s = impl_->stats;
  s.program_size = static_cast<int64_t>(impl_->program.insts.size());
  s.states = impl_->dfa->size() - 1;  // the dead state is not one a decoding visits
  return s;
}

SchemaResult<std::shared_ptr<CompiledSchema>> compile_schema(std::string_view schema_json,
                                                             std::shared_ptr<const TokenVocabulary> vocab) {
  const auto start = std::chrono::steady_clock::now();
  if (!vocab) return schema::schema_error(ErrorCode::kSchemaInvalid, "no vocabulary given", "");
  const schema::ByteSet& single = vocab->impl().single;
  for (int b = 0x20; b <= 0x7E; ++b) {
    if (!single[static_cast<size_t>(b)]) {
      return schema::schema_error(
          ErrorCode::kSchemaUnsupported,
          std::string("the vocabulary has no single-byte token for '") + static_cast<char>(b) +
              "': the token budget guarantee needs one for every printable ASCII byte",
          "");
    }
  }
  auto node = schema::parse_schema(schema_json);
  if (!node) return node.error();
  auto program = schema::compile_program(*node, single);
  if (!program) return program.error();

  auto impl = std::make_unique<CompiledSchema::Impl>();
  impl->vocab = std::move(vocab);
  impl->program = std::move(*program);
  impl->dfa = std::make_unique<LazyDfa>(impl->program, impl->vocab->impl().single);
  if (impl->dfa->min_bytes(impl->dfa->start()) >= kInf) {
    return schema::schema_error(ErrorCode::kSchemaUnsupported,
                                "no valid output can be written with this vocabulary's single-byte tokens", "");
  }
  impl->stats.compile_ms = ms_since(start);
  // A pattern's tables are held as long as the masks: the cache's byte limit
  // counts them too, so many clients' patterns cannot grow it unbounded.
  std::set<const schema::PatternLeaf*> leaves;
  for (const schema::StringSpec& spec : impl->program.strings) {
    if (spec.pattern && leaves.insert(spec.pattern.get()).second) {
      impl->stats.mask_bytes += static_cast<int64_t>((spec.pattern->remaining.size() +
                                                      spec.pattern->interval_bytes.size()) * sizeof(int32_t));
    }
  }
  return std::shared_ptr<CompiledSchema>(new CompiledSchema(std::move(impl)));
}

// ---- JsonConstraint ----

struct JsonConstraint::Impl {
  std::shared_ptr<CompiledSchema> schema;
  int32_t state = LazyDfa::kDead;
  bool ended = false;  // an end token was accepted
  std::string text;
};

JsonConstraint::JsonConstraint(std::shared_ptr<CompiledSchema> schema) : impl_(std::make_unique<Impl>()) {
  impl_->state = schema->impl().dfa->start();
  impl_->schema = std::move(schema);
}
JsonConstraint::~JsonConstraint() = default;
JsonConstraint::JsonConstraint(JsonConstraint&&) noexcept = default;
JsonConstraint& JsonConstraint::operator=(JsonConstraint&&) noexcept = default;

const TokenMask& JsonConstraint::allowed(int32_t budget) {
  CompiledSchema::Impl& s = impl_->schema->impl();
  if (impl_->ended) return s.no_tokens;
  return s.allowed(impl_->state, budget);
}

SchemaResult<void> JsonConstraint::accept(int32_t token) {
  CompiledSchema::Impl& s = impl_->schema->impl();
  const auto refuse = [&](std::string why) {
    return schema::schema_error(ErrorCode::kSchemaInvalid, "token " + std::to_string(token) + " refused: " + why, "");
  };
  if (impl_->ended) return refuse("the output has ended");
  if (token < 0 || token >= s.vocab->size()) return refuse("outside the vocabulary");
  const TokenVocabulary::Impl& vocab = s.vocab->impl();
  const auto& ends = vocab.end_tokens;
  if (std::find(ends.begin(), ends.end(), token) != ends.end()) {
    if (!s.dfa->accepting(impl_->state)) return refuse("an end token before the JSON is complete");
    impl_->ended = true;
    return {};
  }
  if (vocab.special[static_cast<size_t>(token)]) return refuse("a control token inside the JSON");
  const std::string& bytes = vocab.bytes[static_cast<size_t>(token)];
  if (bytes.empty()) return refuse("a token without bytes");
  int32_t next = impl_->state;
  for (char c : bytes) {
    next = s.dfa->next(next, static_cast<uint8_t>(c));
    if (next == LazyDfa::kDead) return refuse("the output would no longer match the schema");
  }
  if (s.dfa->min_bytes(next) >= kInf) return refuse("no completion after it can be written");
  impl_->state = next;
  impl_->text += bytes;
  return {};
}

bool JsonConstraint::complete() const { return impl_->schema->impl().dfa->accepting(impl_->state); }

bool JsonConstraint::finished() const { return impl_->ended || impl_->schema->impl().dfa->finished(impl_->state); }

int32_t JsonConstraint::tokens_to_complete() const { return impl_->schema->impl().dfa->min_bytes(impl_->state); }

const std::string& JsonConstraint::text() const { return impl_->text; }

}  // namespace kvframe::runtime
