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

#include "kvframe/runtime_output/json_schema.h"
#include "random_schema.h"
#include "schema_test_vocab.h"
#include "schema_walks.h"

namespace kvframe::runtime {
namespace {

constexpr int kSchemas = 400;
constexpr int kWalksPerVocabulary = 3;

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
        const schema_test::Walk walk = schema_test::random_walk(*compiled, budget, rng);
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

// The masks against brute force (schema_walks.h) on random walks: covers
// the trie walk and the free-text shortcut.
TEST(SchemaProperty, MasksEqualBruteForce) {
  const auto vocab = schema_test::word_vocabulary();
  for (int seed = 0; seed < 150; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed) + 100000);  // other schemas than the walk test's
    const std::string schema_text = kvframe::test::random_schema(rng);
    const auto schema = schema_test::compile_or_die(schema_text, vocab);
    const int32_t budget = schema->min_tokens() + std::uniform_int_distribution<int32_t>(0, 12)(rng);
    schema_test::expect_masks_equal_brute_force(schema, vocab, budget, rng,
                                                "seed " + std::to_string(seed) + "\n" + schema_text);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace kvframe::runtime
