// Token masks over a vocabulary whose tokens cross JSON structure, the
// budget guard (min_tokens, allowed() near the end, finished()), the schema
// cache and the constraint's bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kvframe/runtime_output/json_schema.h"
#include "schema_test_vocab.h"

namespace kvframe::runtime {
namespace {

using schema_test::kByteEos;
using schema_test::word_token;

constexpr const char* kHoldem =
    R"({"type":"object","properties":{"action":{"type":"string","enum":["fold","call","raise"]},)"
    R"("amount":{"type":"integer","minimum":40,"maximum":1960},"say":{"type":"string","maxLength":60}},)"
    R"("required":["action","amount"],"additionalProperties":false})";

class SchemaMasks : public ::testing::Test {
 protected:
  std::shared_ptr<const TokenVocabulary> vocab_ = schema_test::word_vocabulary();

  // Accepts each token, checking it was in the mask first.
  static void feed(JsonConstraint& c, const std::vector<int32_t>& tokens, int32_t budget = 1000) {
    for (int32_t t : tokens) {
      ASSERT_TRUE(c.allowed(budget).contains(t)) << "token " << t << " after '" << c.text() << "'";
      ASSERT_TRUE(c.accept(t).ok()) << "token " << t << " after '" << c.text() << "'";
      --budget;
    }
  }
};

TEST_F(SchemaMasks, MultiByteTokensCrossStructure) {
  auto schema = schema_test::compile_or_die(kHoldem, vocab_);
  JsonConstraint c(schema);
  const TokenMask& first = c.allowed(100);
  EXPECT_TRUE(first.contains(word_token("{\"")));
  EXPECT_TRUE(first.contains('{'));
  EXPECT_TRUE(first.contains(' '));
  EXPECT_FALSE(first.contains(word_token("[\"")));
  EXPECT_FALSE(first.contains(kByteEos));
  EXPECT_FALSE(first.contains(schema_test::kBytePad));
  EXPECT_TRUE(std::is_sorted(first.ids().begin(), first.ids().end()));

  feed(c, {word_token("{\""), word_token("action"), word_token("\":"), '"'});
  const TokenMask& value = c.allowed(100);
  EXPECT_TRUE(value.contains(word_token("fold")));
  EXPECT_TRUE(value.contains(word_token("raise")));
  EXPECT_FALSE(value.contains(word_token("\"\"")));  // "" is not an action
  EXPECT_FALSE(value.contains(word_token("12")));
  feed(c, {word_token("fold"), word_token("\","), '"', word_token("amount"), word_token("\":")});
  const TokenMask& amount = c.allowed(100);
  EXPECT_TRUE(amount.contains(word_token("12")));
  EXPECT_TRUE(amount.contains(word_token("1960")));
  EXPECT_TRUE(amount.contains(' '));
  EXPECT_FALSE(amount.contains(word_token("0")));    // no amount starts with 0
  EXPECT_FALSE(amount.contains(word_token("-1")));
  EXPECT_FALSE(amount.contains(word_token("00")));
  feed(c, {word_token("1960")});
  EXPECT_FALSE(c.allowed(100).contains(word_token("0")));  // 19600 > 1960
  EXPECT_TRUE(c.allowed(100).contains(word_token("}}")) == false);
  EXPECT_TRUE(c.allowed(100).contains(word_token(", ")));
  feed(c, {word_token(", "), '"', word_token("say"), word_token("\": \"")});
  const TokenMask& say = c.allowed(100);
  EXPECT_TRUE(say.contains(word_token(" the")));
  EXPECT_TRUE(say.contains(word_token("\\n")));        // an escape
  EXPECT_FALSE(say.contains(word_token("\n")));        // a raw newline is not allowed
  EXPECT_TRUE(say.contains(word_token("\xC3\xA9")));
  EXPECT_TRUE(say.contains(word_token("\xE2\x82")));   // part of a character
  EXPECT_FALSE(say.contains(word_token("\xAC")));      // a continuation byte cannot start one
  EXPECT_TRUE(say.contains(word_token("\"}")));
  feed(c, {word_token("\xE2\x82")});
  EXPECT_TRUE(c.allowed(100).contains(word_token("\xAC")));
  EXPECT_FALSE(c.allowed(100).contains('a'));
  feed(c, {word_token("\xAC"), word_token("\"}")});
  EXPECT_TRUE(c.complete());
  EXPECT_TRUE(c.finished());
  EXPECT_EQ(c.allowed(5).ids(), std::vector<int32_t>{kByteEos});
  EXPECT_EQ(c.text(), "{\"action\":\"fold\",\"amount\":1960, \"say\": \"\xE2\x82\xAC\"}");
  EXPECT_TRUE(c.accept(kByteEos).ok());
  EXPECT_TRUE(c.finished());
  EXPECT_TRUE(c.allowed(5).empty());
  EXPECT_FALSE(c.accept('a').ok());
}

TEST_F(SchemaMasks, AcceptRefusesWithoutChangingState) {
  auto schema = schema_test::compile_or_die(kHoldem, vocab_);
  JsonConstraint c(schema);
  EXPECT_FALSE(c.accept(word_token("[\"")).ok());
  EXPECT_FALSE(c.accept(kByteEos).ok());  // not complete yet
  EXPECT_FALSE(c.accept(schema_test::kBytePad).ok());
  EXPECT_FALSE(c.accept(-1).ok());
  EXPECT_FALSE(c.accept(vocab_->size()).ok());
  const auto refused = c.accept(word_token("]"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kSchemaInvalid);
  EXPECT_EQ(c.text(), "");
  EXPECT_TRUE(c.accept(word_token("{\"")).ok());
  EXPECT_EQ(c.text(), "{\"");
}

TEST_F(SchemaMasks, BudgetGuardCompletesInTime) {
  auto schema = schema_test::compile_or_die(kHoldem, vocab_);
  // {"action":"fold","amount":40}
  EXPECT_EQ(schema->min_tokens(), 29);
  JsonConstraint c(schema);
  EXPECT_EQ(c.tokens_to_complete(), 29);
  int32_t budget = 31;
  // Greedy toward the longest tokens: the guard must still end in time.
  while (!c.finished()) {
    const TokenMask& m = c.allowed(budget);
    ASSERT_FALSE(m.empty()) << c.text();
    ASSERT_GE(budget, 1) << c.text();
    int32_t pick = m.ids().front();
    for (int32_t t : m.ids()) {
      if (t == kByteEos) continue;
      if (pick == kByteEos || vocab_->bytes(t).size() > vocab_->bytes(pick).size()) pick = t;
    }
    ASSERT_TRUE(c.accept(pick).ok());
    --budget;
    ASSERT_LE(c.tokens_to_complete(), budget) << c.text();
  }
  EXPECT_GE(budget, 0);
  EXPECT_TRUE(c.complete());
}

TEST_F(SchemaMasks, BudgetFiltersNearTheEnd) {
  auto schema = schema_test::compile_or_die(R"({"type":"string","maxLength":5})", vocab_);
  JsonConstraint c(schema);
  EXPECT_EQ(schema->min_tokens(), 2);
  // Budget 2: after '"' only the closing quote fits.
  const TokenMask& tight = c.allowed(2);
  EXPECT_TRUE(tight.contains('"'));
  EXPECT_TRUE(tight.contains(word_token("\"\"")));
  ASSERT_TRUE(c.accept('"').ok());
  const TokenMask& last = c.allowed(1);
  EXPECT_TRUE(last.contains('"'));
  EXPECT_FALSE(last.contains('a'));
  EXPECT_FALSE(last.contains(word_token("ab")));
  EXPECT_TRUE(c.allowed(3).contains('a'));
  EXPECT_TRUE(c.allowed(2).contains(word_token("abc")));  // abc, then '"': 2 tokens
  EXPECT_FALSE(c.allowed(1).contains(word_token("abc")));
  EXPECT_FALSE(c.allowed(2).contains(word_token("\xE2\x82")));  // needs 2 more: the byte and '"'
  EXPECT_TRUE(c.allowed(3).contains(word_token("\xE2\x82")));
}

TEST_F(SchemaMasks, NumbersEndWhenNothingCanFollow) {
  auto schema = schema_test::compile_or_die(R"({"type":"integer","minimum":0,"maximum":20})", vocab_);
  JsonConstraint c(schema);
  feed(c, {'1'});
  EXPECT_TRUE(c.complete());
  EXPECT_FALSE(c.finished());  // 10..19 may still follow
  EXPECT_TRUE(c.allowed(5).contains(kByteEos));
  EXPECT_TRUE(c.allowed(5).contains('9'));
  feed(c, {'9'});
  EXPECT_TRUE(c.finished());
  JsonConstraint zero(schema);
  feed(zero, {word_token("0")});
  EXPECT_TRUE(zero.finished());
}

TEST_F(SchemaMasks, MasksAreCachedPerState) {
  auto schema = schema_test::compile_or_die(kHoldem, vocab_);
  JsonConstraint a(schema);
  const TokenMask* first = &a.allowed(100);
  const auto masks = schema->stats().masks;
  JsonConstraint b(schema);
  EXPECT_EQ(&b.allowed(100), first);
  EXPECT_EQ(schema->stats().masks, masks);
  EXPECT_GT(schema->stats().program_size, 0);
  EXPECT_GT(schema->stats().states, 0);
}

TEST_F(SchemaMasks, CacheByText) {
  SchemaCache cache(vocab_, 2);
  auto a = cache.get(kHoldem);
  ASSERT_TRUE(a.ok());
  auto again = cache.get(kHoldem);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(a->get(), again->get());
  EXPECT_FALSE(cache.get("{").ok());
  ASSERT_TRUE(cache.get(R"({"type":"null"})").ok());
  ASSERT_TRUE(cache.get(R"({"type":"boolean"})").ok());  // drops the Hold'em schema (least recently used)
  const auto stats = cache.stats();
  EXPECT_EQ(stats.hits, 1);
  EXPECT_EQ(stats.misses, 4);
  EXPECT_EQ(stats.entries, 2);
  auto recompiled = cache.get(kHoldem);
  ASSERT_TRUE(recompiled.ok());
  EXPECT_NE(recompiled->get(), a->get());
  EXPECT_EQ(cache.vocabulary(), vocab_);
}

// Tenants' scopes: one never gets (or times) another's compiled schema.
TEST_F(SchemaMasks, CacheKeepsScopesApart) {
  SchemaCache cache(vocab_, 8);
  auto a = cache.get(kHoldem, 1);
  auto b = cache.get(kHoldem, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->get(), b->get());
  EXPECT_EQ(cache.get(kHoldem, 1).value().get(), a->get());
  EXPECT_EQ(cache.stats().misses, 2);
  EXPECT_EQ(cache.stats().hits, 1);
}

TEST_F(SchemaMasks, CacheDropsSchemasWhoseMasksExceedItsBytes) {
  SchemaCache cache(vocab_, 16, /*max_bytes=*/1);
  auto a = cache.get(kHoldem);
  ASSERT_TRUE(a.ok());
  JsonConstraint walk(*a);
  walk.allowed(40);  // its first mask: now it holds memory
  EXPECT_EQ(cache.get(kHoldem).value().get(), a->get()) << "the schema in use is never dropped";
  ASSERT_TRUE(cache.get(R"({"type":"null"})").ok());
  const auto stats = cache.stats();
  EXPECT_EQ(stats.entries, 1);
  EXPECT_EQ(stats.evicted, 1);
  EXPECT_NE(cache.get(kHoldem).value().get(), a->get()) << "dropped, so compiled anew";
}

TEST_F(SchemaMasks, LeadingSpaceOnlyOnce) {
  auto schema = schema_test::compile_or_die(R"({"type":"boolean"})", vocab_);
  JsonConstraint c(schema);
  EXPECT_TRUE(c.allowed(10).contains(word_token("true")));
  EXPECT_FALSE(c.allowed(10).contains(word_token("  ")));
  feed(c, {' '});
  EXPECT_FALSE(c.allowed(10).contains(' '));
}

}  // namespace
}  // namespace kvframe::runtime
