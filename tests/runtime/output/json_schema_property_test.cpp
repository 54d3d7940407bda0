// Property test: hundreds of random schemas (tests/support/random_schema.h),
// each walked at random through its masks on two vocabularies with random
// token budgets no smaller than min_tokens(). Every step must offer a token,
// every walk must end complete within its budget, and every output must
// parse; then Python's jsonschema (validate_outputs.py), which shares no
// code with ours, validates every (schema, output) pair.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <random>
#include <string>

#include "kvframe/runtime/json_schema.h"
#include "random_schema.h"
#include "schema_test_vocab.h"

namespace kvframe::runtime {
namespace {

constexpr int kSchemas = 400;
constexpr int kWalksPerVocabulary = 3;

struct Walk {
  std::string text;
  std::string failure;  // empty when every property held
};

Walk random_walk(const std::shared_ptr<CompiledSchema>& schema, int32_t budget, std::mt19937_64& rng) {
  JsonConstraint c(schema);
  Walk walk;
  // The decoder stops at finished() or when the budget is spent, complete either way.
  while (!c.finished() && budget > 0) {
    if (c.tokens_to_complete() > budget) {
      walk.failure = "out of budget after '" + c.text() + "'";
      return walk;
    }
    const TokenMask& mask = c.allowed(budget);
    if (mask.empty()) {
      walk.failure = "empty mask after '" + c.text() + "'";
      return walk;
    }
    const int32_t token =
        mask.ids()[std::uniform_int_distribution<size_t>(0, mask.ids().size() - 1)(rng)];
    if (auto error = c.accept(token)) {
      walk.failure = "a masked token was refused: " + error->to_string();
      return walk;
    }
    --budget;
  }
  if (!c.complete()) walk.failure = "stopped incomplete: '" + c.text() + "'";
  walk.text = c.text();
  return walk;
}

TEST(SchemaProperty, RandomSchemasRandomWalksValidOutputs) {
  const std::shared_ptr<const TokenVocabulary> vocabularies[] = {schema_test::byte_vocabulary(),
                                                                 schema_test::word_vocabulary()};
  kvframe::test::SchemaOutputLog pairs(::testing::TempDir() + "json_schema_outputs.jsonl");
  simdjson::dom::parser parser;
  for (int seed = 0; seed < kSchemas; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    const std::string schema_text = kvframe::test::random_schema(rng);
    for (const auto& vocab : vocabularies) {
      auto compiled = compile_schema(schema_text, vocab);
      ASSERT_TRUE(compiled.ok()) << "seed " << seed << ": " << compiled.error().to_string() << "\n" << schema_text;
      const int32_t min_tokens = (*compiled)->min_tokens();
      for (int w = 0; w < kWalksPerVocabulary; ++w) {
        // The first walk gets the tightest budget the guarantee covers.
        const int32_t budget = min_tokens + (w == 0 ? 0 : std::uniform_int_distribution<int32_t>(0, 40)(rng));
        const Walk walk = random_walk(*compiled, budget, rng);
        ASSERT_TRUE(walk.failure.empty()) << "seed " << seed << " budget " << budget << ": " << walk.failure << "\n"
                                          << schema_text;
        const simdjson::padded_string padded(walk.text);
        simdjson::dom::element parsed;
        ASSERT_EQ(parser.parse(padded).get(parsed), simdjson::SUCCESS)
            << "seed " << seed << ": output is not JSON: " << walk.text << "\n" << schema_text;
        pairs.add(schema_text, walk.text);
      }
    }
  }
  EXPECT_EQ(pairs.size(), kSchemas * 2 * kWalksPerVocabulary);
  EXPECT_TRUE(pairs.all_valid()) << "the independent validator refused an output (see above); pairs in "
                                 << pairs.path();
}

// The masks against brute force: at every step of random walks, each token
// of the vocabulary is tried on a fresh constraint replaying the walk so
// far; it must be in allowed(budget) exactly when it is accepted and still
// leaves the output completable within budget - 1 tokens (end tokens: when
// the output is complete). Covers the trie walk and the free-text shortcut.
TEST(SchemaProperty, MasksEqualBruteForce) {
  const auto vocab = schema_test::word_vocabulary();
  for (int seed = 0; seed < 150; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed) + 100000);  // other schemas than the walk test's
    const std::string schema_text = kvframe::test::random_schema(rng);
    const auto schema = schema_test::compile_or_die(schema_text, vocab);
    std::vector<int32_t> walked;
    JsonConstraint c(schema);
    int32_t budget = schema->min_tokens() + std::uniform_int_distribution<int32_t>(0, 12)(rng);
    while (!c.finished() && budget > 0) {
      const TokenMask& mask = c.allowed(budget);
      for (int32_t t = 0; t < vocab->size(); ++t) {
        JsonConstraint probe(schema);
        for (int32_t w : walked) ASSERT_FALSE(probe.accept(w).has_value());
        const bool accepted = !probe.accept(t).has_value();
        const bool fits = accepted && (probe.finished() || probe.tokens_to_complete() <= budget - 1);
        ASSERT_EQ(mask.contains(t), fits) << "seed " << seed << " token " << t << " ('" << vocab->bytes(t)
                                          << "') after '" << c.text() << "', budget " << budget << "\n"
                                          << schema_text;
      }
      const int32_t token = mask.ids()[std::uniform_int_distribution<size_t>(0, mask.ids().size() - 1)(rng)];
      ASSERT_FALSE(c.accept(token).has_value());
      walked.push_back(token);
      --budget;
    }
  }
}

}  // namespace
}  // namespace kvframe::runtime
