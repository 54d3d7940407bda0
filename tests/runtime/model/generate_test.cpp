// generate() on a tiny model: greedy decoding equals a hand-written loop over
// forward(), and every stop condition is reported.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kvframe/runtime/generate.h"
#include "tiny_model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

// fp32, the reference these tests compare against (the library's default
// dtype follows the CPU: bf16 where it runs natively).
ModelParams fp32_params() {
  ModelParams params;
  params.dtype = "fp32";
  return params;
}

struct Tiny {
  GgufFile file;
  Tokenizer tokenizer;
  std::unique_ptr<Model> model;
};

Tiny tiny() {
  const std::vector<uint8_t> bytes = test::tiny_model_bytes({});
  GgufFile file = GgufFile::parse(bytes.data(), bytes.size()).value();
  Tokenizer tokenizer = Tokenizer::from_gguf(file).value();
  auto model = Model::load(file, fp32_params()).value();
  return {std::move(file), std::move(tokenizer), std::move(model)};
}

std::vector<TokenId> greedy_by_hand(const Model& model, const std::vector<TokenId>& prompt, int n) {
  KvCache cache = *model.new_cache(static_cast<int64_t>(prompt.size()) + n);
  at::Tensor logits = *model.forward(test::token_ids(prompt), cache);
  std::vector<TokenId> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(static_cast<TokenId>(logits.argmax().item<int64_t>()));
    if (i + 1 < n) logits = *model.forward(at::tensor({static_cast<int64_t>(out.back())}), cache);
  }
  return out;
}

TEST(Generate, GreedyEqualsAHandWrittenLoopAndStreamsTheSameText) {
  Tiny t = tiny();
  const std::vector<TokenId> prompt = t.tokenizer.encode("Hello, world");
  GenerateParams params;
  params.max_tokens = 12;
  params.prefill_chunk = 5;  // several prefill chunks
  std::string streamed;
  auto g = generate(*t.model, t.tokenizer, prompt, params, [&](const TextChunk& c) { streamed += c.text; });
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  EXPECT_EQ(g->tokens, greedy_by_hand(*t.model, prompt, 12));
  EXPECT_EQ(g->stop, StopReason::kMaxTokens);
  EXPECT_EQ(g->text, t.tokenizer.decode(g->tokens));
  EXPECT_EQ(streamed, g->text);
  EXPECT_EQ(g->stats.prompt_tokens, static_cast<int64_t>(prompt.size()));
  EXPECT_EQ(g->stats.generated_tokens, 12);
  EXPECT_EQ(g->stats.decode_steps, 11);
}

TEST(Generate, StopsAtAStopTokenWithoutEmittingIt) {
  Tiny t = tiny();
  const std::vector<TokenId> prompt = t.tokenizer.encode("abc");
  const std::vector<TokenId> greedy = greedy_by_hand(*t.model, prompt, 4);
  GenerateParams params;
  params.max_tokens = 10;
  params.stop_tokens = {greedy[2]};
  auto g = generate(*t.model, t.tokenizer, prompt, params);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->stop, StopReason::kStopToken);
  const auto first = std::find(greedy.begin(), greedy.end(), greedy[2]) - greedy.begin();
  EXPECT_EQ(g->tokens, std::vector<TokenId>(greedy.begin(), greedy.begin() + first));
}

TEST(Generate, StopsWhenTheContextIsFull) {
  Tiny t = tiny();
  const std::vector<TokenId> prompt = t.tokenizer.encode("abcdef");
  GenerateParams params;
  params.max_tokens = 50;
  params.context = static_cast<int64_t>(prompt.size()) + 2;
  auto g = generate(*t.model, t.tokenizer, prompt, params);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->stop, StopReason::kContextFull);
  EXPECT_EQ(g->tokens.size(), 3u);  // two fit in the cache; the third comes from the last logits
}

TEST(Generate, DefaultStopTokensAreEosAndEndOfTurn) {
  Tiny t = tiny();
  const auto stops = default_stop_tokens(t.tokenizer, "<|im_end|>");
  EXPECT_EQ(stops, std::vector<TokenId>{258});  // eos is <|im_end|> itself: listed once
  EXPECT_FALSE(generate(*t.model, t.tokenizer, {}, {}).ok());
}

}  // namespace
}  // namespace kvframe::runtime
