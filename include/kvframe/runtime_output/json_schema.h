// Schema-constrained decoding: a JSON Schema (the subset games need) compiled
// into a constraint over the model's vocabulary, so that every token sampled
// under it keeps the output a prefix of a JSON value valid against the
// schema, and the output is complete within the token limit. No torch.
//
//   auto vocab = std::make_shared<const TokenVocabulary>(...);   // once per tokenizer
//   SchemaCache cache(vocab);                                    // once per engine
//   auto schema = cache.get(schema_json);                        // per query: cached by text
//   JsonConstraint c(*schema);                                   // per decoding
//   while (!c.finished()) {
//     const TokenMask& m = c.allowed(tokens_left);               // sample among m only
//     c.accept(token);
//   }
//
// Supported: type (one name or an array of names), properties + required
// (properties are written in the schema's order; optional ones may be
// left out), additionalProperties (never generated), enum, const,
// minimum / maximum / exclusiveMinimum / exclusiveMaximum (integer and
// number), minLength / maxLength (in code points), pattern (below), items
// + minItems / maxItems, anyOf, nested objects and arrays; annotations
// (title, description, default, examples, $schema, $id, $comment) are
// ignored. Anything else that constrains values (format, oneOf, $ref,
// uniqueItems, ...) is kSchemaUnsupported, naming the keyword and where it is:
// a keyword we would not enforce could let an invalid action through.
//
// pattern: an ECMA-262 regular expression matched against the decoded
// string value (so a `"` it matches is written \", and an escape such as
// \u0041 counts as the character), per code point, anywhere in the value
// unless anchored with ^ / $, as JSON Schema has it. The subset: literals
// and escapes, `.`, classes [...] [^...], \d \w \s \D \W \S, groups
// (...) (?:...) (?<name>...), |, * + ? {m} {m,} {m,n} (lazy or not), ^ $.
// Backreferences, lookaround, \b, \p{...} and inline flags are
// kSchemaUnsupported; a malformed pattern is kSchemaInvalid; both at
// ".../pattern".
//
// The text form: compact JSON, with at most one space after ':' and ','
// and before the value (so the model may use its usual "key": value tokens).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/error.h"

namespace kvframe::runtime {

// kSchemaNotJson, kSchemaInvalid, kSchemaUnsupported or kSchemaTooComplex
// (common/error.h), where in the schema, and what to do instead.
struct SchemaError {
  ErrorCode code = ErrorCode::kSchemaInvalid;
  std::string message;  // what is wrong and what to do instead
  std::string path;     // JSON pointer into the schema ("/properties/amount"); "" for the root
  std::string to_string() const;
  // As a query's or a CLI's Error: "output schema at '<path>': <message>".
  Error to_error() const;
};
template <class T>
using SchemaResult = common::Result<T, SchemaError>;

// The vocabulary as the constraint sees it: the bytes each token decodes to.
// Built once per tokenizer (it indexes the tokens in a byte trie, so a mask
// walks shared prefixes once).
class TokenVocabulary {
 public:
  // bytes[i]: what token i decodes to (Tokenizer::token_bytes). special[i]:
  // control tokens, never allowed inside the JSON. end_tokens: the tokens
  // that end generation (eos, end of turn), allowed once the JSON is complete.
  TokenVocabulary(std::vector<std::string> bytes, std::vector<bool> special, std::vector<int32_t> end_tokens);
  ~TokenVocabulary();
  TokenVocabulary(const TokenVocabulary&) = delete;
  TokenVocabulary& operator=(const TokenVocabulary&) = delete;

  int32_t size() const;
  const std::string& bytes(int32_t token) const;
  const std::vector<int32_t>& end_tokens() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// The tokens allowed at one step. ids: ascending; contains(): O(1).
class TokenMask {
 public:
  const std::vector<int32_t>& ids() const { return ids_; }
  bool contains(int32_t token) const {
    return token >= 0 && static_cast<size_t>(token) < bits_.size() * 64 && ((bits_[token >> 6] >> (token & 63)) & 1);
  }
  bool empty() const { return ids_.empty(); }

  // Built by the constraint.
  void assign(std::vector<int32_t> ids, int32_t vocab_size);
  // The same from a bitset: token t is bit t % 64 of bits[t / 64].
  void assign_bits(std::vector<uint64_t> bits);

 private:
  std::vector<int32_t> ids_;
  std::vector<uint64_t> bits_;
};

// A schema compiled against one vocabulary. Immutable to its users; caches
// inside (automaton states, token masks) grow as decodings visit them, so a
// schema used every frame pays for each state's mask once. One thread at a
// time (the engine thread); share across threads only with your own lock.
class CompiledSchema {
 public:
  ~CompiledSchema();
  CompiledSchema(const CompiledSchema&) = delete;
  CompiledSchema& operator=(const CompiledSchema&) = delete;

  // The fewest tokens any complete valid output takes (an upper bound on the
  // true minimum: the shortest text, one byte per token). A query whose
  // max_tokens is below it is refused as unsatisfiable.
  int32_t min_tokens() const;
  // Sizes, for logs and benchmarks.
  struct Stats {
    int64_t program_size = 0;   // compiled instructions
    int64_t states = 0;         // automaton states discovered so far
    int64_t masks = 0;          // token masks computed so far
    double compile_ms = 0;      // parse + compile (masks are computed lazily, as decoding needs them)
    double mask_ms = 0;         // total time spent computing masks
    int64_t mask_bytes = 0;     // memory the cached masks hold (ids and bits), and patterns' tables
  };
  Stats stats() const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  friend SchemaResult<std::shared_ptr<CompiledSchema>> compile_schema(std::string_view,
                                                                      std::shared_ptr<const TokenVocabulary>);
  explicit CompiledSchema(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Parses and compiles a schema. Errors as SchemaError says; the vocabulary
// must have a single-byte token for every printable ASCII byte
// (kSchemaUnsupported otherwise: the token budget guarantee is built on them).
SchemaResult<std::shared_ptr<CompiledSchema>> compile_schema(std::string_view schema_json,
                                                             std::shared_ptr<const TokenVocabulary> vocab);

// Compiled schemas by their text (XXH3 of the bytes), least recently used
// dropped beyond `capacity` schemas or beyond `max_bytes` of the token masks
// they hold (masks are computed as decodings visit states and stay with the
// schema: ~2 MB for a Hold'em action with a free-text field on a 49K-token
// vocabulary, measured by bench_schema). Errors are not cached.
class SchemaCache {
 public:
  explicit SchemaCache(std::shared_ptr<const TokenVocabulary> vocab, size_t capacity = 256,
                       int64_t max_bytes = int64_t{64} << 20);
  ~SchemaCache();
  // The schema compiled for `scope` (a tenant's: block_store.h's scopes): a
  // scope never gets another's compiled schema, so how fast a schema
  // compiles tells a tenant nothing of what others sent. Eviction is shared.
  SchemaResult<std::shared_ptr<CompiledSchema>> get(std::string_view schema_json, uint64_t scope = 0);
  struct Stats {
    int64_t hits = 0, misses = 0, entries = 0, evicted = 0;
    int64_t mask_bytes = 0;  // held by the cached schemas, as of the last get()
  };
  Stats stats() const;
  const std::shared_ptr<const TokenVocabulary>& vocabulary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One decoding's progress through a compiled schema.
class JsonConstraint {
 public:
  explicit JsonConstraint(std::shared_ptr<CompiledSchema> schema);
  ~JsonConstraint();
  JsonConstraint(JsonConstraint&&) noexcept;
  JsonConstraint& operator=(JsonConstraint&&) noexcept;

  // The tokens that may come next when `budget` tokens are left, this one
  // included (budget >= 1): those that keep the output a valid prefix and
  // still let it complete within the budget; end tokens once it is complete.
  // Never empty while !finished() and budget >= tokens_to_complete().
  const TokenMask& allowed(int32_t budget);
  // Advances by one token, which must be in allowed() (kInvalid otherwise:
  // the state is then unchanged). An end token marks the output finished.
  SchemaResult<void> accept(int32_t token);

  bool complete() const;   // the output so far is a whole valid value
  bool finished() const;   // complete and nothing may follow but an end token (or an end token was accepted)
  int32_t tokens_to_complete() const;  // the bound allowed() keeps within (0 when complete)
  const std::string& text() const;     // the bytes accepted so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
