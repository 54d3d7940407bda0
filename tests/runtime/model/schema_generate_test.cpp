// Hundreds of random schemas (tests/support/random_schema.h) decoded by tiny
// random-weight models, sampling at temperature 1 so the masks, not the
// model, keep the output valid: every output ends complete within its token
// limit, and Python's jsonschema validates every (schema, output) pair.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <iterator>
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
  ModelParams params;
  params.dtype = "fp32";  // as the tolerance-free checks here were written for; bf16 is tested elsewhere
  auto model = Model::load(*file, params);
  auto tokenizer = Tokenizer::from_gguf(*file);
  EXPECT_TRUE(model.ok() && tokenizer.ok());
  return {std::move(model).value(), std::move(tokenizer).value()};
}

// Step-by-step decoding, one forward pass per token: what generate() must
// equal although it runs forced tokens in one pass (jump-forward).
std::vector<TokenId> step_by_step(const Model& model, const Tokenizer& tokenizer, const std::vector<TokenId>& prompt,
                                  const GenerateParams& params, int64_t& passes) {
  KvCache cache = *model.new_cache(static_cast<int64_t>(prompt.size()) + params.max_tokens);
  at::Tensor logits = *prefill(model, prompt, cache);
  Decoder decoder(tokenizer, params);
  passes = 0;
  while (true) {
    const TokenId token = decoder.pick(logits);
    if (!decoder.take(token)) break;
    logits = *model.forward(at::tensor({static_cast<int64_t>(token)}), cache);
    ++passes;
  }
  return decoder.finish().tokens;
}

TEST(SchemaGenerate, JumpForwardGivesStepByStepTokensInFewerPasses) {
  Tiny t = tiny("llama");
  const std::vector<TokenId> stops = default_stop_tokens(t.tokenizer, "<|im_end|>");
  const auto vocabulary = token_vocabulary(t.tokenizer, stops);
  const std::vector<TokenId> prompt = t.tokenizer.encode("Answer as JSON:");
  int64_t forced = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    auto compiled = compile_schema(test::random_schema(rng), vocabulary);
    ASSERT_TRUE(compiled.ok());
    GenerateParams params;
    params.schema = *compiled;
    params.stop_tokens = stops;
    params.max_tokens = (*compiled)->min_tokens() + 20;
    if (seed % 2 == 1) params.sampling = {0.8f, 0, 1.0f, static_cast<uint64_t>(seed)};  // greedy and seeded sampling
    int64_t passes = 0;
    const std::vector<TokenId> want = step_by_step(*t.model, t.tokenizer, prompt, params, passes);
    auto g = generate(*t.model, t.tokenizer, prompt, params);
    ASSERT_TRUE(g.ok()) << g.error().to_string();
    EXPECT_EQ(g->tokens, want) << "seed " << seed;
    // Never more passes; fewer by the forced tokens, and by the last pass when
    // the end itself is forced (no logits needed after it).
    EXPECT_LE(g->stats.decode_steps + g->stats.forced_tokens, passes) << "seed " << seed;
    forced += g->stats.forced_tokens;
  }
  EXPECT_GT(forced, 0);  // byte-level tokens: property names and punctuation are forced
}

// A schema'd answer records its first choices: what came before each, its
// likeliest allowed tokens most likely first, and greedy decoding took the
// top one; an answer without a schema records none.
TEST(SchemaGenerate, RecordsTheFirstChoicesWithTheirProbabilities) {
  Tiny t = tiny("llama");
  const std::vector<TokenId> stops = default_stop_tokens(t.tokenizer, "<|im_end|>");
  auto compiled = compile_schema(
      R"({"anyOf":[{"type":"object","properties":{"action":{"const":"fold"}},"required":["action"]},)"
      R"({"type":"object","properties":{"action":{"const":"call"}},"required":["action"]},)"
      R"({"type":"object","properties":{"action":{"const":"raise"},"amount":{"type":"integer","enum":[40,80,120]}},)"
      R"("required":["action","amount"]}]})",
      token_vocabulary(t.tokenizer, stops));
  ASSERT_TRUE(compiled.ok());
  GenerateParams params;
  params.schema = *compiled;
  params.stop_tokens = stops;
  params.max_tokens = 40;
  for (const char* prompt : {"Act:", "Your move, as JSON:", "Fold, call or raise?"}) {
    auto g = generate(*t.model, t.tokenizer, t.tokenizer.encode(prompt), params);
    ASSERT_TRUE(g.ok()) << g.error().to_string();
    ASSERT_FALSE(g->choices.empty()) << prompt;
    EXPECT_LE(g->choices.size(), kChoicePoints);
    std::string generated;
    for (TokenId id : g->tokens) generated += t.tokenizer.token_bytes(id);
    for (const ChoicePoint& point : g->choices) {
      ASSERT_GE(point.options.size(), 2u);
      EXPECT_LE(point.options.size(), kChoiceOptions);
      double total = 0;
      for (size_t k = 0; k < point.options.size(); ++k) {
        EXPECT_GT(point.options[k].probability, 0.0);
        if (k > 0) {
          EXPECT_LE(point.options[k].probability, point.options[k - 1].probability);
        }
        total += point.options[k].probability;
      }
      EXPECT_LE(total, 1.0 + 1e-6);
      EXPECT_EQ(generated.rfind(point.prefix + point.options.front().text, 0), 0u) << generated;
    }
  }
  GenerateParams free = params;
  free.schema = nullptr;
  auto plain = generate(*t.model, t.tokenizer, t.tokenizer.encode("Act:"), free);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->choices.empty());
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

// Game moves as patterns (a flight plan, a chess move, an item id, a line
// without markup, ...) decoded by the tiny models at temperature 1, 240
// answers in all: every one must end complete within its limit and match
// its pattern, as Python's jsonschema (re.search on the decoded value)
// judges.
const char* const kPatternSchemas[] = {
    R"({"type":"string","pattern":"^([NESW][0-9]?)+$","maxLength":12})",
    R"({"type":"object","properties":{"move":{"type":"string","pattern":"^[a-h][1-8]-[a-h][1-8]$"},)"
    R"("say":{"type":"string","pattern":"^[^<>]*$","maxLength":24}},"required":["move"]})",
    R"({"type":"string","pattern":"^(item|npc)_[0-9]{3}$"})",
    R"({"type":"string","pattern":"^[A-Z][a-z]+( [A-Z][a-z]+)?$","maxLength":16})",
    R"({"type":"array","items":{"type":"string","pattern":"^(up|down|left|right)$"},"minItems":1,"maxItems":4})",
    R"({"type":"string","pattern":"gold","minLength":4,"maxLength":10})",
    R"({"type":"string","pattern":"^\"[^\"\\\\]*\"$","maxLength":12})",
    R"({"anyOf":[{"type":"string","pattern":"^[0-9]+(\\.[0-9]{1,2})?$","maxLength":6},{"type":"null"}]})",
};
constexpr int kAnswersPerPatternSchema = 15;

TEST(SchemaGenerate, PatternSchemasOnTinyModelsAlwaysMatch) {
  test::SchemaOutputLog pairs(::testing::TempDir() + "schema_generate_pattern_outputs.jsonl");
  for (const char* arch : {"llama", "qwen2"}) {
    Tiny t = tiny(arch);
    const std::vector<TokenId> stops = default_stop_tokens(t.tokenizer, "<|im_end|>");
    const auto vocabulary = token_vocabulary(t.tokenizer, stops);
    const std::vector<TokenId> prompt = t.tokenizer.encode("Your move, as JSON:");
    for (const char* schema : kPatternSchemas) {
      auto compiled = compile_schema(schema, vocabulary);
      ASSERT_TRUE(compiled.ok()) << compiled.error().to_string() << "\n" << schema;
      for (int seed = 0; seed < kAnswersPerPatternSchema; ++seed) {
        GenerateParams params;
        params.schema = *compiled;
        params.stop_tokens = stops;
        params.sampling = {1.0f, 0, 1.0f, static_cast<uint64_t>(seed)};
        params.max_tokens = (*compiled)->min_tokens() + (seed % 3 == 0 ? 0 : seed * 2);
        auto g = generate(*t.model, t.tokenizer, prompt, params);
        ASSERT_TRUE(g.ok()) << g.error().to_string();
        ASSERT_EQ(g->stop, StopReason::kComplete) << arch << " seed " << seed << ": " << g->text << "\n" << schema;
        ASSERT_LE(static_cast<int32_t>(g->tokens.size()), params.max_tokens);
        pairs.add(schema, g->text);
      }
    }
  }
  EXPECT_EQ(pairs.size(), 2 * static_cast<int>(std::size(kPatternSchemas)) * kAnswersPerPatternSchema);
  EXPECT_TRUE(pairs.all_valid()) << "the independent validator refused an output (see above); pairs in "
                                 << pairs.path();
}

// Sessions decoding in lockstep (decode_together, one forward_sequences pass
// a step for all): each answer is the one generate() gives it alone, under
// its own schema, greedy or seeded sampling, with forced runs of different
// lengths in the same pass — in fewer passes than decoding them one by one.
TEST(SchemaGenerate, SessionsDecodedTogetherAnswerAsEachAlone) {
  Tiny t = tiny("llama");
  const std::vector<TokenId> stops = default_stop_tokens(t.tokenizer, "<|im_end|>");
  const auto vocabulary = token_vocabulary(t.tokenizer, stops);
  constexpr int kSessions = 6;
  std::vector<std::vector<TokenId>> prompts;
  std::vector<GenerateParams> params(kSessions);
  std::vector<std::vector<TokenId>> alone;
  int64_t passes_alone = 0;
  for (int i = 0; i < kSessions; ++i) {
    std::mt19937_64 rng(static_cast<uint64_t>(100 + i));
    auto compiled = compile_schema(test::random_schema(rng), vocabulary);
    ASSERT_TRUE(compiled.ok());
    params[i].schema = *compiled;
    params[i].stop_tokens = stops;
    params[i].max_tokens = (*compiled)->min_tokens() + 12;
    if (i % 3 == 2) params[i].sampling = {0.8f, 0, 1.0f, static_cast<uint64_t>(i)};
    prompts.push_back(t.tokenizer.encode("Session " + std::to_string(i) + std::string(static_cast<size_t>(i * 7), '.') +
                                         " answers as JSON:"));
    auto g = generate(*t.model, t.tokenizer, prompts.back(), params[i]);
    ASSERT_TRUE(g.ok()) << g.error().to_string();
    alone.push_back(g->tokens);
    passes_alone += g->stats.decode_steps;
  }

  std::vector<KvCache> caches;
  std::vector<Decoder> decoders;
  std::vector<DecodingSequence> sequences;
  for (int i = 0; i < kSessions; ++i) {
    caches.push_back(*t.model->new_cache(static_cast<int64_t>(prompts[i].size()) + params[i].max_tokens));
    decoders.emplace_back(t.tokenizer, params[i]);
  }
  for (int i = 0; i < kSessions; ++i) {
    sequences.push_back({&caches[i], *prefill(*t.model, prompts[i], caches[i]), &decoders[i], {}, {}});
  }
  ASSERT_TRUE(decode_together(*t.model, sequences).ok());
  int64_t passes_together = 0;
  for (int i = 0; i < kSessions; ++i) {
    EXPECT_EQ(decoders[i].finish().tokens, alone[i]) << "session " << i;
    passes_together = std::max(passes_together, sequences[i].stats.decode_steps);
  }
  EXPECT_LT(passes_together, passes_alone);
}

}  // namespace
}  // namespace kvframe::runtime
