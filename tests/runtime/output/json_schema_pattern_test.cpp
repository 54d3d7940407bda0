// `pattern` on strings: the regex subset (pattern_parser.h) matched against
// the decoded value, anywhere unless anchored, together with minLength /
// maxLength; the JSON escapes of the value; typed errors for bad patterns;
// then sampled outputs checked by Python's jsonschema (re.search) and the
// masks against brute force.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kvframe/runtime_output/json_schema.h"
#include "random_schema.h"
#include "schema_test_vocab.h"
#include "schema_walks.h"

namespace kvframe::runtime {
namespace {

using schema_test::accepts;
using schema_test::accepts_prefix;

// A string schema with `pattern` (JSON-quoted here: write the regex's
// backslashes doubled) and extra keywords.
std::string string_with(const std::string& quoted_pattern, const std::string& extra = "") {
  return R"({"type":"string","pattern":)" + quoted_pattern + extra + "}";
}

class SchemaPattern : public ::testing::Test {
 protected:
  std::shared_ptr<CompiledSchema> compile(const std::string& schema) {
    return schema_test::compile_or_die(schema, vocab_);
  }
  SchemaError error_of(const std::string& schema) {
    auto compiled = compile_schema(schema, vocab_);
    EXPECT_FALSE(compiled.ok()) << schema;
    return compiled.ok() ? SchemaError{} : compiled.error();
  }
  std::shared_ptr<const TokenVocabulary> vocab_ = schema_test::byte_vocabulary();
};

TEST_F(SchemaPattern, FlightPlan) {
  auto s = compile(string_with(R"("^([NESW][0-9]?)+$")"));
  for (const char* ok : {R"("N3E2S")", R"("N")", R"("W9")", R"("NESW")", R"("S1N2E3W4")"}) {
    EXPECT_TRUE(accepts(s, ok)) << ok;
  }
  for (const char* bad : {R"("")", R"("N33")", R"("3N")", R"("n3")", R"("N3 E2")"}) {
    EXPECT_FALSE(accepts(s, bad)) << bad;
  }
  EXPECT_FALSE(accepts_prefix(s, R"("N3x)"));  // refused at the byte, not at the end
  EXPECT_FALSE(accepts_prefix(s, "\"\""));  // the empty value does not match
  EXPECT_EQ(s->min_tokens(), 3);           // "N"
}

TEST_F(SchemaPattern, UnanchoredMatchesAnywhere) {
  auto anywhere = compile(string_with(R"("ab+")"));
  EXPECT_TRUE(accepts(anywhere, R"("xxabbbyy")"));
  EXPECT_TRUE(accepts(anywhere, R"("ab")"));
  EXPECT_FALSE(accepts(anywhere, R"("xayb")"));
  EXPECT_EQ(anywhere->min_tokens(), 4);
  auto at_end = compile(string_with(R"("bc$")"));
  EXPECT_TRUE(accepts(at_end, R"("abc")"));
  EXPECT_FALSE(accepts(at_end, R"("abcd")"));
  auto at_start = compile(string_with(R"("^ab")"));
  EXPECT_TRUE(accepts(at_start, R"("abzzz")"));
  EXPECT_FALSE(accepts(at_start, R"("zab")"));
  auto empty_only = compile(string_with(R"("^$")"));
  EXPECT_TRUE(accepts(empty_only, R"("")"));
  EXPECT_FALSE(accepts(empty_only, R"("a")"));
  auto anchor_in_branch = compile(string_with(R"~("^(a$|b)")~"));
  EXPECT_TRUE(accepts(anchor_in_branch, R"("a")"));
  EXPECT_FALSE(accepts(anchor_in_branch, R"("ab")"));
  EXPECT_TRUE(accepts(anchor_in_branch, R"("bxx")"));
  auto always = compile(string_with(R"("(?:ab)*")"));  // matches the empty string, so every value
  EXPECT_TRUE(accepts(always, R"("zzz")"));
  EXPECT_TRUE(accepts(always, R"("")"));
}

TEST_F(SchemaPattern, ClassesAndQuantifiers) {
  auto lower = compile(string_with(R"("^[a-c]{2,3}$")"));
  EXPECT_TRUE(accepts(lower, R"("ab")"));
  EXPECT_TRUE(accepts(lower, R"("cab")"));
  EXPECT_FALSE(accepts(lower, R"("a")"));
  EXPECT_FALSE(accepts_prefix(lower, R"("abca)"));
  EXPECT_FALSE(accepts_prefix(lower, R"("d)"));
  auto negated = compile(string_with(R"("^[^0-9]+$")"));
  EXPECT_TRUE(accepts(negated, "\"x\xC3\xA9!\""));
  EXPECT_FALSE(accepts(negated, R"("a1")"));
  auto escapes = compile(string_with(R"("^\\d\\w\\s\\D\\W\\S$")"));
  EXPECT_TRUE(accepts(escapes, R"("7_ x-y")"));
  EXPECT_TRUE(accepts(escapes, R"("0a\tb\"\\")"));
  EXPECT_TRUE(accepts(escapes, "\"9Z\\ufeff\xC3\xA9\xE2\x82\xACx\""));  // \s has U+FEFF; \D and \W have é and €
  EXPECT_FALSE(accepts(escapes, "\"\xD9\xA1" R"(a b c")"));  // \d is ASCII only
  EXPECT_FALSE(accepts(escapes, R"("0a b-\u00a0")"));          // \S is not U+00A0
  auto dot = compile(string_with(R"("^a.c$")"));
  EXPECT_TRUE(accepts(dot, R"("a-c")"));
  EXPECT_TRUE(accepts(dot, "\"a\xF0\x9F\x98\x80" "c\""));  // one code point, four bytes
  EXPECT_FALSE(accepts(dot, R"("a\nc")"));                 // not a line terminator
  EXPECT_FALSE(accepts(dot, R"("a\u2028c")"));
  auto counts = compile(string_with(R"("^x{2}y{1,}z{0,2}w*?$")"));
  EXPECT_TRUE(accepts(counts, R"("xxy")"));
  EXPECT_TRUE(accepts(counts, R"("xxyyyzzww")"));
  EXPECT_FALSE(accepts(counts, R"("xy")"));
  EXPECT_FALSE(accepts(counts, R"("xxyzzz")"));
  auto groups = compile(string_with(R"("^(?<dir>up|down)(?:-(left|right))?$")"));
  EXPECT_TRUE(accepts(groups, R"("up")"));
  EXPECT_TRUE(accepts(groups, R"("down-left")"));
  EXPECT_FALSE(accepts(groups, R"("down-")"));
  auto literal_syntax = compile(string_with(R"("^\\(\\*\\)\\.\\[\\]\\{\\}\\|\\/\\^\\$$")"));
  EXPECT_TRUE(accepts(literal_syntax, R"("(*).[]{}|/^$")"));
  auto class_edges = compile(string_with(R"("^[-a\\]\\d]+$")"));
  EXPECT_TRUE(accepts(class_edges, R"("-a]5")"));
  EXPECT_FALSE(accepts(class_edges, R"("b")"));
}

// The pattern constrains the decoded value: its quote and backslash are
// written escaped, and any character may be written as an escape.
TEST_F(SchemaPattern, MatchesTheDecodedValue) {
  auto quoted = compile(string_with(R"("^a\"b\\\\c$")"));  // the value a"b\c
  EXPECT_TRUE(accepts(quoted, R"("a\"b\\c")"));
  EXPECT_TRUE(accepts(quoted, R"("\u0061\u0022b\u005Cc")"));
  EXPECT_FALSE(accepts_prefix(quoted, "\"a\""));  // a raw quote ends the string too early
  EXPECT_FALSE(accepts_prefix(quoted, R"("a\\)"));
  EXPECT_EQ(quoted->min_tokens(), 9);  // "a\"b\\c": two characters written as two bytes each

  auto newline = compile(string_with(R"("^\\n$")"));
  EXPECT_TRUE(accepts(newline, R"("\n")"));
  EXPECT_TRUE(accepts(newline, R"("\u000a")"));
  EXPECT_EQ(newline->min_tokens(), 4);
  auto control = compile(string_with(R"("^[\\x00-\\x07]$")"));
  EXPECT_TRUE(accepts(control, R"("\u0003")"));
  EXPECT_EQ(control->min_tokens(), 8);  // only \u escapes write these

  auto accented = compile(string_with(R"("^\u00e9+$")"));  // é, from the schema's own JSON escape
  EXPECT_TRUE(accepts(accented, "\"\xC3\xA9\xC3\xA9\""));
  EXPECT_TRUE(accepts(accented, R"("\u00e9\u00E9")"));
  EXPECT_FALSE(accepts_prefix(accented, "\"\xC3\xA8"));  // è: refused at its second byte
  EXPECT_FALSE(accepts_prefix(accented, R"("\u00e8)"));
  EXPECT_EQ(accented->min_tokens(), 4);  // raw UTF-8: two bytes

  auto emoji = compile(string_with(R"("^\\uD83D\\uDE00\\u{1F601}$")"));  // a surrogate pair is one character
  EXPECT_TRUE(accepts(emoji, "\"\xF0\x9F\x98\x80\xF0\x9F\x98\x81\""));
  EXPECT_TRUE(accepts(emoji, R"("\ud83d\ude00\uD83D\uDE01")"));
  EXPECT_FALSE(accepts_prefix(emoji, R"("\ud83d\ude01)"));
  EXPECT_FALSE(accepts_prefix(emoji, R"("\ud83e)"));
}

// Raw UTF-8 where the vocabulary has tokens for the bytes, else escapes:
// the shortest completion counts what can be written.
TEST_F(SchemaPattern, ShortestCompletionFollowsTheVocabulary) {
  std::vector<std::string> bytes;
  for (int b = 0; b < 0x80; ++b) bytes.emplace_back(1, static_cast<char>(b));  // ASCII only
  bytes.emplace_back("\xC3\xA9");                                               // é, as a whole token
  const auto ascii = std::make_shared<const TokenVocabulary>(bytes, std::vector<bool>(bytes.size(), false),
                                                             std::vector<int32_t>{});
  const auto s = schema_test::compile_or_die(string_with(R"("^\u00e9$")"), ascii);
  EXPECT_EQ(s->min_tokens(), 8);  // "\u00e9"
  JsonConstraint c(s);
  ASSERT_TRUE(c.accept('"').ok());
  const int32_t e_acute = 0x80;
  EXPECT_TRUE(c.allowed(2).contains(e_acute));  // then the closing quote
  EXPECT_FALSE(c.allowed(2).contains('\\'));
  EXPECT_TRUE(c.allowed(7).contains('\\'));     // \u00e9 and the quote
  EXPECT_FALSE(c.allowed(7).contains('e'));
}

TEST_F(SchemaPattern, WithLengths) {
  auto s = compile(string_with(R"("^[a-z]*$")", R"(,"minLength":2,"maxLength":3)"));
  EXPECT_FALSE(accepts(s, R"("a")"));
  EXPECT_TRUE(accepts(s, R"("ab")"));
  EXPECT_TRUE(accepts(s, R"("abc")"));
  EXPECT_FALSE(accepts_prefix(s, R"("abcd)"));
  EXPECT_FALSE(accepts_prefix(s, R"("A)"));
  EXPECT_EQ(s->min_tokens(), 4);
  // The pattern's shortest match is shorter than minLength: the rest must still match.
  auto digits = compile(string_with(R"("^[0-9]+(px)?$")", R"(,"minLength":4)"));
  EXPECT_TRUE(accepts(digits, R"("1234")"));
  EXPECT_TRUE(accepts(digits, R"("12px")"));
  EXPECT_FALSE(accepts(digits, R"("1px")"));
  EXPECT_EQ(digits->min_tokens(), 6);
  // maxLength leaves no room for "px" after three digits.
  auto bounded = compile(string_with(R"("^[0-9]+(px)?$")", R"(,"maxLength":4)"));
  EXPECT_TRUE(accepts(bounded, R"("12px")"));
  EXPECT_FALSE(accepts_prefix(bounded, R"("123p)"));
  // Unanchored, with a minLength: the match may come anywhere.
  auto contains = compile(string_with(R"("[0-9]")", R"(,"minLength":3)"));
  EXPECT_TRUE(accepts(contains, R"("ab7")"));
  EXPECT_FALSE(accepts(contains, R"("abc")"));
}

TEST_F(SchemaPattern, EnumValuesAreFilteredByThePattern) {
  auto e = compile(R"({"type":"string","enum":["N3","x","E2S"],"pattern":"^([NESW][0-9]?)+$"})");
  EXPECT_TRUE(accepts(e, R"("N3")"));
  EXPECT_TRUE(accepts(e, R"("E2S")"));
  EXPECT_FALSE(accepts(e, R"("x")"));
  const SchemaError none = error_of(R"({"enum":["x"],"pattern":"^y"})");
  EXPECT_EQ(none.code, ErrorCode::kSchemaInvalid) << none.to_string();
}

void expect_error(const SchemaError& e, ErrorCode code, const std::string& path, const std::string& word) {
  EXPECT_EQ(e.code, code) << e.to_string();
  EXPECT_EQ(e.path, path) << e.to_string();
  EXPECT_NE(e.message.find(word), std::string::npos) << e.to_string();
}

TEST_F(SchemaPattern, BadPatternsAreTypedErrors) {
  using Code = ErrorCode;
  const std::string at = "/pattern";
  expect_error(error_of(string_with(R"("^(ab$")")), Code::kSchemaInvalid, at, "unbalanced parenthesis");
  expect_error(error_of(string_with(R"~("ab)")~")), Code::kSchemaInvalid, at, "unbalanced parenthesis");
  expect_error(error_of(string_with(R"("[ab")")), Code::kSchemaInvalid, at, "never closed");
  expect_error(error_of(string_with(R"("*a")")), Code::kSchemaInvalid, at, "nothing to repeat");
  expect_error(error_of(string_with(R"("a**")")), Code::kSchemaInvalid, at, "nothing to repeat");
  expect_error(error_of(string_with(R"("^*")")), Code::kSchemaInvalid, at, "anchor");
  expect_error(error_of(string_with(R"("a{2,1}")")), Code::kSchemaInvalid, at, "minimum above");
  expect_error(error_of(string_with(R"("a{")")), Code::kSchemaInvalid, at, "\\{");
  expect_error(error_of(string_with(R"("a]")")), Code::kSchemaInvalid, at, "\\]");
  expect_error(error_of(string_with(R"("[z-a]")")), Code::kSchemaInvalid, at, "out of order");
  expect_error(error_of(string_with(R"("[\\d-z]")")), Code::kSchemaInvalid, at, "range");
  expect_error(error_of(string_with(R"("\\q")")), Code::kSchemaInvalid, at, "unknown escape");
  expect_error(error_of(string_with(R"("\\x4")")), Code::kSchemaInvalid, at, "hex");
  expect_error(error_of(string_with(R"("a\\")")), Code::kSchemaInvalid, at, "backslash");
  expect_error(error_of(string_with(R"("[]")")), Code::kSchemaInvalid, at, "matches no string");
  expect_error(error_of(string_with("5")), Code::kSchemaInvalid, at, "string");
  expect_error(error_of(string_with(R"("(?=a)b")")), Code::kSchemaUnsupported, at, "lookahead");
  expect_error(error_of(string_with(R"("(?!a)b")")), Code::kSchemaUnsupported, at, "lookahead");
  expect_error(error_of(string_with(R"("(?<=a)b")")), Code::kSchemaUnsupported, at, "lookbehind");
  expect_error(error_of(string_with(R"("(a)\\1")")), Code::kSchemaUnsupported, at, "backreference");
  expect_error(error_of(string_with(R"("(?<n>a)\\k<n>")")), Code::kSchemaUnsupported, at, "backreference");
  expect_error(error_of(string_with(R"("\\bword")")), Code::kSchemaUnsupported, at, "\\b");
  expect_error(error_of(string_with(R"("\\p{L}")")), Code::kSchemaUnsupported, at, "\\p");
  expect_error(error_of(string_with(R"("(?i)a")")), Code::kSchemaUnsupported, at, "(?i");
  expect_error(error_of(string_with(R"("a{1001}")")), Code::kSchemaTooComplex, at, "1000");
  expect_error(error_of(string_with(R"(".*a.{20}")")), Code::kSchemaTooComplex, at, "states");
  // Unsupported features name themselves and the subset.
  const SchemaError lookahead = error_of(string_with(R"~("x(?=y)")~"));
  EXPECT_NE(lookahead.message.find("at character 1"), std::string::npos) << lookahead.to_string();
  EXPECT_NE(lookahead.message.find("supported:"), std::string::npos) << lookahead.to_string();
  // The path of a nested pattern.
  expect_error(error_of(R"~({"type":"object","properties":{"plan":{"type":"string","pattern":"(?=N)"}}})~"),
               Code::kSchemaUnsupported, "/properties/plan/pattern", "lookahead");
  expect_error(error_of(R"({"type":"array","items":{"enum":["a"],"pattern":"("}})"), Code::kSchemaInvalid,
               "/items/pattern", "unbalanced");
  // Lengths no match can meet; a length table too large to hold.
  expect_error(error_of(string_with(R"("^a{5}$")", R"(,"maxLength":3)")), Code::kSchemaInvalid, "", "minLength");
  expect_error(error_of(R"({"type":"object","properties":{"p":{"type":"string","pattern":"^a{5}$","minLength":6}}})"),
               Code::kSchemaInvalid, "/properties/p", "pattern");
  expect_error(error_of(string_with(R"("^[a-z]+$")", R"(,"maxLength":100000000)")), Code::kSchemaTooComplex, "",
               "maxLength");
  expect_error(error_of(R"({"anyOf":[{"type":"string"}],"pattern":"a"})"), Code::kSchemaUnsupported, "", "anyOf");
}

// Pattern schemas walked at random on both test vocabularies (the word
// vocabulary's tokens cross characters and escapes), at least 200 outputs
// in all, each checked by Python's jsonschema: re.search of the pattern,
// on the decoded value, shares no code with ours. Python's \d \w \s are
// wider than ECMA-262's, so the patterns below avoid \D \W \S and \s.
const std::vector<std::string> kSampledSchemas = {
    string_with(R"("^([NESW][0-9]?)+$")", R"(,"maxLength":12)"),
    string_with(R"("^[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?$")"),
    string_with(R"("^item_[0-9]{3}$")"),
    string_with(R"("^(fold|call|raise [1-9][0-9]{0,2})$")"),
    string_with(R"("^\\d{1,3}(,\\d{3})*$")", R"(,"maxLength":11)"),
    string_with(R"("colou?r")", R"(,"maxLength":10)"),
    string_with(R"("^[^<>{}]*$")", R"(,"minLength":3,"maxLength":20)"),
    string_with(R"("^\"[a-z]+\"\\\\$")", R"(,"maxLength":8)"),
    string_with(R"("^[\u00e0-\u00ff]+$")", R"(,"maxLength":4)"),
    string_with("\"^(\xF0\x9F\x98\x80|x){1,3}$\""),
    string_with(R"("^$|^a.c$")"),
    string_with(R"("end$")", R"(,"maxLength":9)"),
    string_with(R"("[0-9]")", R"(,"minLength":5,"maxLength":9)"),
    R"({"type":"object","properties":{"plan":{"type":"string","pattern":"^([NESW][0-9]?)+$","maxLength":8},)"
    R"("say":{"type":"string","maxLength":20}},"required":["plan"]})",
    R"({"type":"array","items":{"type":"string","pattern":"^[a-z]{1,4}$"},"maxItems":3})",
    R"({"anyOf":[{"type":"string","pattern":"^-?[0-9]+\\.[0-9]$"},{"type":"integer","minimum":0,"maximum":9}]})",
};
constexpr int kWalksPerVocabulary = 8;

TEST(SchemaPatternSampling, SampledOutputsMatch) {
  const std::shared_ptr<const TokenVocabulary> vocabularies[] = {schema_test::byte_vocabulary(),
                                                                 schema_test::word_vocabulary()};
  kvframe::test::SchemaOutputLog pairs(::testing::TempDir() + "json_schema_pattern_outputs.jsonl");
  std::mt19937_64 rng(36);
  for (const std::string& schema : kSampledSchemas) {
    for (const auto& vocab : vocabularies) {
      const auto compiled = schema_test::compile_or_die(schema, vocab);
      for (int w = 0; w < kWalksPerVocabulary; ++w) {
        // The first walk gets the tightest budget the guarantee covers.
        const int32_t slack = w == 0 ? 0 : std::uniform_int_distribution<int32_t>(0, 30)(rng);
        const int32_t budget = compiled->min_tokens() + slack;
        const schema_test::Walk walk = schema_test::random_walk(compiled, budget, rng);
        ASSERT_TRUE(walk.failure.empty()) << schema << " budget " << budget << ": " << walk.failure;
        pairs.add(schema, walk.text);
      }
    }
  }
  EXPECT_GE(pairs.size(), 200);
  EXPECT_EQ(pairs.size(), static_cast<int>(kSampledSchemas.size()) * 2 * kWalksPerVocabulary);
  EXPECT_TRUE(pairs.all_valid()) << "the independent validator refused an output (see above); pairs in "
                                 << pairs.path();
}

TEST(SchemaPatternSampling, MasksEqualBruteForce) {
  const auto vocab = schema_test::word_vocabulary();
  std::mt19937_64 rng(3600);
  for (const std::string& schema : kSampledSchemas) {
    const auto compiled = schema_test::compile_or_die(schema, vocab);
    for (int w = 0; w < 2; ++w) {
      const int32_t budget = compiled->min_tokens() + std::uniform_int_distribution<int32_t>(0, 10)(rng);
      schema_test::expect_masks_equal_brute_force(compiled, vocab, budget, rng, schema);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace kvframe::runtime
