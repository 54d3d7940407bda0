// Hundreds of random schemas (tests/support/random_schema.h) decoded by tiny
// random-weight models, sampling at temperature 1 so the masks, not the
// model, keep the output valid: every output ends complete within its token
// limit, and Python's jsonschema validates every (schema, output) pair.
#include <gtest/gtest.h>

#include <random>

#include "kvframe/runtime/generate.h"
#include "random_schema.h"
#include "tiny_model.h"

namespace kvframe::runtime {
namespace {

constexpr int kSchemas = 300;

struct Tiny {
  std::unique_ptr<Model> model;
  Tokenizer tokenizer;
};

Tiny tiny(const std::string& arch) {
  test::TinyModelSpec spec;
  spec.arch = arch;
  spec.n_ctx = 1024;
  const std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  auto model = Model::load(*file);
  auto tokenizer = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(model.ok() && tokenizer.ok());
  return {std::move(model).value(), std::move(tokenizer).value()};
}

TEST(SchemaGenerate, RandomSchemasOnTinyModelsAlwaysGiveValidJson) {
  test::SchemaOutputLog pairs(::testing::TempDir() + "schema_generate_outputs.jsonl");
  for (const char* arch : {"llama", "qwen2"}) {
    Tiny t = tiny(arch);
    const std::vector<TokenId> stops = default_stop_tokens(t.tokenizer, "<|im_end|>");
    const auto vocabulary = token_vocabulary(t.tokenizer, stops);
    const std::vector<TokenId> prompt = t.tokenizer.encode("Answer as JSON:");
    for (int seed = 0; seed < kSchemas; ++seed) {
      std::mt19937_64 rng(static_cast<uint64_t>(seed));
      const std::string schema = test::random_schema(rng);
      auto compiled = compile_schema(schema, vocabulary);
      ASSERT_TRUE(compiled.ok()) << compiled.error().to_string() << "\n" << schema;
      GenerateParams params;
      params.schema = *compiled;
      params.stop_tokens = stops;
      params.sampling = {1.0f, 0, 1.0f, static_cast<uint64_t>(seed)};
      // From the tightest limit the guarantee covers to a loose one.
      params.max_tokens = (*compiled)->min_tokens() + (seed % 3 == 0 ? 0 : seed % 41);
      auto g = generate(*t.model, t.tokenizer, prompt, params);
      ASSERT_TRUE(g.ok()) << g.error().to_string();
      ASSERT_EQ(g->stop, StopReason::kComplete) << arch << " seed " << seed << ": " << g->text << "\n" << schema;
      ASSERT_LE(static_cast<int32_t>(g->tokens.size()), params.max_tokens);
      pairs.add(schema, g->text);
    }
  }
  EXPECT_EQ(pairs.size(), 2 * kSchemas);
  EXPECT_TRUE(pairs.all_valid()) << "the independent validator refused an output (see above); pairs in "
                                 << pairs.path();
}

}  // namespace
}  // namespace kvframe::runtime
