// Each supported keyword: which texts a compiled schema accepts and refuses
// (driven byte by byte), and the error codes and paths of bad schemas.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kvframe/runtime_output/json_schema.h"
#include "schema_test_vocab.h"

namespace kvframe::runtime {
namespace {

using schema_test::accepts;
using schema_test::accepts_prefix;
using schema_test::byte_vocabulary;

class SchemaKeywords : public ::testing::Test {
 protected:
  std::shared_ptr<CompiledSchema> compile(std::string_view schema) {
    return schema_test::compile_or_die(schema, vocab_);
  }
  SchemaError error_of(std::string_view schema) {
    auto compiled = compile_schema(schema, vocab_);
    EXPECT_FALSE(compiled.ok()) << schema;
    return compiled.ok() ? SchemaError{} : compiled.error();
  }
  std::shared_ptr<const TokenVocabulary> vocab_ = byte_vocabulary();
};

TEST_F(SchemaKeywords, NullAndBoolean) {
  auto n = compile(R"({"type":"null"})");
  EXPECT_TRUE(accepts(n, "null"));
  EXPECT_TRUE(accepts(n, " null"));
  EXPECT_FALSE(accepts(n, "nul"));
  EXPECT_FALSE(accepts(n, "  null"));
  EXPECT_FALSE(accepts(n, "null "));
  auto b = compile(R"({"type":"boolean"})");
  EXPECT_TRUE(accepts(b, "true"));
  EXPECT_TRUE(accepts(b, "false"));
  EXPECT_FALSE(accepts(b, "True"));
  EXPECT_EQ(b->min_tokens(), 4);
}

TEST_F(SchemaKeywords, StringLengthsCountCodePoints) {
  auto s = compile(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_FALSE(accepts(s, R"("a")"));
  EXPECT_TRUE(accepts(s, R"("ab")"));
  EXPECT_TRUE(accepts(s, R"("abc")"));
  EXPECT_FALSE(accepts_prefix(s, R"("abcd)"));
  EXPECT_TRUE(accepts(s, "\"\xC3\xA9\xE2\x82\xAC\""));              // é€: 2 code points, 5 bytes
  EXPECT_TRUE(accepts(s, "\"\xF0\x9F\x98\x80\xF0\x9F\x98\x80\""));  // two emoji
  EXPECT_TRUE(accepts(s, R"("\n\t\"")"));                            // escapes count one each
  EXPECT_TRUE(accepts(s, R"("\ud83d\ude00x")"));                     // a surrogate pair is one code point
  EXPECT_FALSE(accepts_prefix(s, R"("\ud83d\ude00xyz)"));
  EXPECT_EQ(s->min_tokens(), 4);  // "aa"
}

TEST_F(SchemaKeywords, StringUtf8IsStrict) {
  auto s = compile(R"({"type":"string"})");
  EXPECT_TRUE(accepts(s, R"("")"));
  EXPECT_TRUE(accepts(s, "\"\x7F\""));                       // DEL is allowed raw
  EXPECT_FALSE(accepts_prefix(s, "\"\x01"));                 // control characters must be escaped
  EXPECT_FALSE(accepts_prefix(s, "\"\n"));
  EXPECT_FALSE(accepts_prefix(s, "\"\xC0\x80"));             // overlong NUL
  EXPECT_FALSE(accepts_prefix(s, "\"\xC1"));
  EXPECT_FALSE(accepts_prefix(s, "\"\xE0\x80"));             // overlong 3-byte form
  EXPECT_TRUE(accepts_prefix(s, "\"\xE0\xA0\x80"));
  EXPECT_FALSE(accepts_prefix(s, "\"\xED\xA0"));             // UTF-8 surrogate
  EXPECT_TRUE(accepts_prefix(s, "\"\xED\x9F\xBF"));          // U+D7FF
  EXPECT_FALSE(accepts_prefix(s, "\"\xF0\x80"));             // overlong 4-byte form
  EXPECT_FALSE(accepts_prefix(s, "\"\xF4\x90"));             // past U+10FFFF
  EXPECT_TRUE(accepts(s, "\"\xF4\x8F\xBF\xBF\""));           // U+10FFFF
  EXPECT_FALSE(accepts_prefix(s, "\"\xF5"));
  EXPECT_FALSE(accepts_prefix(s, "\"\x80"));                 // a lone continuation byte
  EXPECT_FALSE(accepts_prefix(s, "\"\xC3\""));               // a character cut short
  EXPECT_TRUE(accepts(s, R"("\"\\\/\b\f\n\r\t\u00e9\uABCD")"));
  EXPECT_FALSE(accepts_prefix(s, R"("\x)"));
  EXPECT_FALSE(accepts_prefix(s, R"("\uDC)"));               // a lone low surrogate
  EXPECT_FALSE(accepts_prefix(s, R"("\ud800")"));            // a high surrogate alone
  EXPECT_FALSE(accepts_prefix(s, R"("\ud800\u0041)"));       // ... followed by no low one
  EXPECT_TRUE(accepts(s, R"("\uD800\uDFFF")"));
  EXPECT_FALSE(accepts_prefix(s, R"("\u12G)"));
}

TEST_F(SchemaKeywords, EnumAndConstAreLiterals) {
  auto e = compile(R"({"type":"string","enum":["fold","call","raise"]})");
  EXPECT_TRUE(accepts(e, R"("fold")"));
  EXPECT_TRUE(accepts(e, R"( "raise")"));
  EXPECT_FALSE(accepts(e, R"("check")"));
  EXPECT_FALSE(accepts_prefix(e, R"("foldx)"));
  auto mixed = compile(R"({"enum":[1,"a",null,{"b":[true]}]})");
  EXPECT_TRUE(accepts(mixed, "1"));
  EXPECT_TRUE(accepts(mixed, R"("a")"));
  EXPECT_TRUE(accepts(mixed, "null"));
  EXPECT_TRUE(accepts(mixed, R"({"b":[true]})"));
  EXPECT_FALSE(accepts(mixed, "2"));
  auto c = compile(R"({"const":"x\"y"})");
  EXPECT_TRUE(accepts(c, R"("x\"y")"));
  // Values the other keywords refuse are left out.
  auto filtered = compile(R"({"type":"string","enum":["a","bbbb",3],"maxLength":2})");
  EXPECT_TRUE(accepts(filtered, R"("a")"));
  EXPECT_FALSE(accepts(filtered, R"("bbbb")"));
  EXPECT_FALSE(accepts(filtered, "3"));
  auto both = compile(R"({"enum":["a","b"],"const":"b"})");
  EXPECT_FALSE(accepts(both, R"("a")"));
  EXPECT_TRUE(accepts(both, R"("b")"));
}

TEST_F(SchemaKeywords, IntegerBounds) {
  auto i = compile(R"({"type":"integer","minimum":40,"maximum":1960})");
  for (const char* ok : {"40", "41", "99", "100", "1960", "1000", "999"}) EXPECT_TRUE(accepts(i, ok)) << ok;
  for (const char* bad : {"39", "1961", "0", "-40", "040", "40.0", "2000", "4"}) EXPECT_FALSE(accepts(i, bad)) << bad;
  EXPECT_FALSE(accepts_prefix(i, "0"));   // no number in range starts with 0
  EXPECT_FALSE(accepts_prefix(i, "20000"));
  EXPECT_FALSE(accepts_prefix(i, "-"));
  EXPECT_EQ(i->min_tokens(), 2);

  auto negative = compile(R"({"type":"integer","minimum":-20,"maximum":-5})");
  EXPECT_TRUE(accepts(negative, "-5"));
  EXPECT_TRUE(accepts(negative, "-20"));
  EXPECT_FALSE(accepts(negative, "-21"));
  EXPECT_FALSE(accepts(negative, "-4"));
  EXPECT_FALSE(accepts(negative, "5"));
  EXPECT_FALSE(accepts_prefix(negative, "-3"));

  auto exclusive = compile(R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10})");
  EXPECT_FALSE(accepts(exclusive, "0"));
  EXPECT_TRUE(accepts(exclusive, "1"));
  EXPECT_TRUE(accepts(exclusive, "9"));
  EXPECT_FALSE(accepts(exclusive, "10"));

  auto zero = compile(R"({"type":"integer","minimum":0,"maximum":0})");
  EXPECT_TRUE(accepts(zero, "0"));
  EXPECT_TRUE(accepts(zero, "-0"));  // JSON's -0 is 0
  EXPECT_FALSE(accepts(zero, "00"));

  auto extremes = compile(R"({"type":"integer"})");
  EXPECT_TRUE(accepts(extremes, "9223372036854775807"));
  EXPECT_TRUE(accepts(extremes, "-9223372036854775808"));
  EXPECT_FALSE(accepts(extremes, "9223372036854775808"));
  EXPECT_FALSE(accepts(extremes, "-9223372036854775809"));
  EXPECT_FALSE(accepts_prefix(extremes, "1e"));

  auto fractional_bounds = compile(R"({"type":"integer","minimum":1.5,"maximum":3.5})");
  EXPECT_FALSE(accepts(fractional_bounds, "1"));
  EXPECT_TRUE(accepts(fractional_bounds, "2"));
  EXPECT_TRUE(accepts(fractional_bounds, "3"));
  EXPECT_FALSE(accepts(fractional_bounds, "4"));
}

TEST_F(SchemaKeywords, NumberWithFractions) {
  auto n = compile(R"({"type":"number","minimum":-1.5,"exclusiveMaximum":2.25})");
  for (const char* ok : {"-1.5", "-1.499999", "0", "0.5", "2", "2.249999", "-0.25", "1.1"}) {
    EXPECT_TRUE(accepts(n, ok)) << ok;
  }
  for (const char* bad : {"-1.500001", "-2", "2.25", "3", "1.", "1.2345678", ".5", "1e3"}) {
    EXPECT_FALSE(accepts(n, bad)) << bad;
  }
  auto tiny = compile(R"({"type":"number","exclusiveMinimum":0.1,"maximum":0.1000015})");
  EXPECT_FALSE(accepts(tiny, "0.1"));
  EXPECT_TRUE(accepts(tiny, "0.100001"));
  EXPECT_FALSE(accepts(tiny, "0.100002"));
  EXPECT_EQ(tiny->min_tokens(), 8);
}

TEST_F(SchemaKeywords, ObjectsWithOptionalProperties) {
  auto o = compile(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"null"},
                      "c":{"type":"boolean"}},"required":["b"]})");
  EXPECT_TRUE(accepts(o, R"({"b":null})"));
  EXPECT_TRUE(accepts(o, R"({"a":1,"b":null})"));
  EXPECT_TRUE(accepts(o, R"({"a": 1, "b": null, "c": true})"));
  EXPECT_TRUE(accepts(o, R"({"b":null,"c":false})"));
  EXPECT_FALSE(accepts(o, R"({"a":1})"));
  EXPECT_FALSE(accepts(o, R"({"b":null,"a":1})"));  // schema order
  EXPECT_FALSE(accepts_prefix(o, R"({,)"));
  EXPECT_FALSE(accepts_prefix(o, R"({"b":null,})"));
  EXPECT_FALSE(accepts_prefix(o, R"({ ")"));
  EXPECT_FALSE(accepts_prefix(o, R"({"b" :)"));
  auto all_optional = compile(R"({"type":"object","properties":{"x":{"type":"null"},"y":{"type":"null"}}})");
  EXPECT_TRUE(accepts(all_optional, "{}"));
  EXPECT_TRUE(accepts(all_optional, R"({"y":null})"));
  EXPECT_TRUE(accepts(all_optional, R"({"x":null,"y":null})"));
  EXPECT_FALSE(accepts_prefix(all_optional, R"({"x":null"y")"));
  EXPECT_EQ(all_optional->min_tokens(), 2);
  auto empty = compile(R"({"type":"object","additionalProperties":{"type":"string"}})");
  EXPECT_TRUE(accepts(empty, "{}"));
  EXPECT_FALSE(accepts_prefix(empty, R"({")"));
  auto escaped_key = compile(R"({"type":"object","properties":{"a\"b\n":{"type":"null"}},"required":["a\"b\n"]})");
  EXPECT_TRUE(accepts(escaped_key, R"({"a\"b\n":null})"));
}

TEST_F(SchemaKeywords, Arrays) {
  auto a = compile(R"({"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"minItems":1,"maxItems":3})");
  EXPECT_FALSE(accepts(a, "[]"));
  EXPECT_TRUE(accepts(a, "[1]"));
  EXPECT_TRUE(accepts(a, "[1, 2,3]"));
  EXPECT_FALSE(accepts_prefix(a, "[1,2,3,"));
  EXPECT_FALSE(accepts_prefix(a, "[ 1"));
  EXPECT_FALSE(accepts_prefix(a, "[1,]"));
  auto unbounded = compile(R"({"type":"array","items":{"type":"boolean"},"minItems":2})");
  EXPECT_FALSE(accepts(unbounded, "[true]"));
  EXPECT_TRUE(accepts(unbounded, "[true,false]"));
  EXPECT_TRUE(accepts(unbounded, "[true,false,true,true,false,true]"));
  auto empty = compile(R"({"type":"array","items":{"type":"null"}})");
  EXPECT_TRUE(accepts(empty, "[]"));
  EXPECT_TRUE(accepts(empty, "[null,null]"));
  auto none = compile(R"({"type":"array","maxItems":0})");
  EXPECT_TRUE(accepts(none, "[]"));
  EXPECT_FALSE(accepts_prefix(none, "[n"));
}

TEST_F(SchemaKeywords, AnyOfAndTypeArrays) {
  auto t = compile(R"({"type":["string","null"],"maxLength":1})");
  EXPECT_TRUE(accepts(t, "null"));
  EXPECT_TRUE(accepts(t, R"("a")"));
  EXPECT_FALSE(accepts(t, R"("ab")"));
  auto any = compile(R"({"anyOf":[{"type":"integer","minimum":5,"maximum":5},
                                  {"type":"object","properties":{"k":{"const":1}},"required":["k"]}]})");
  EXPECT_TRUE(accepts(any, "5"));
  EXPECT_TRUE(accepts(any, R"({"k":1})"));
  EXPECT_FALSE(accepts(any, "6"));
}

TEST_F(SchemaKeywords, AnnotationsAreIgnored) {
  auto s = compile(R"({"$schema":"http://json-schema.org/draft-07/schema#","title":"t","description":"d",
                      "type":"boolean","default":true,"examples":[true],"$comment":"c"})");
  EXPECT_TRUE(accepts(s, "true"));
}

void expect_error(const SchemaError& e, ErrorCode code, const std::string& path, const std::string& word) {
  EXPECT_EQ(e.code, code) << e.to_string();
  EXPECT_EQ(e.path, path) << e.to_string();
  EXPECT_NE(e.message.find(word), std::string::npos) << e.to_string();
}

TEST_F(SchemaKeywords, Errors) {
  expect_error(error_of("{"), ErrorCode::kSchemaNotJson, "", "not JSON");
  expect_error(error_of(R"~({"type":"string","pattern":"(?=a)"})~"), ErrorCode::kSchemaUnsupported, "/pattern",
               "lookahead");  // more in json_schema_pattern_test.cpp
  expect_error(error_of(R"({"type":"object","properties":{"a~b/c":{"type":"string","format":"date"}}})"),
               ErrorCode::kSchemaUnsupported, "/properties/a~0b~1c/format", "format");
  expect_error(error_of(R"({"$ref":"#/definitions/x"})"), ErrorCode::kSchemaUnsupported, "/$ref", "$ref");
  expect_error(error_of(R"({"oneOf":[]})"), ErrorCode::kSchemaUnsupported, "/oneOf", "oneOf");
  expect_error(error_of(R"({"type":"array","items":{"type":"string"},"uniqueItems":true})"),
               ErrorCode::kSchemaUnsupported, "/uniqueItems", "uniqueItems");
  expect_error(error_of("true"), ErrorCode::kSchemaUnsupported, "", "type");
  expect_error(error_of("{}"), ErrorCode::kSchemaUnsupported, "", "type");
  expect_error(error_of(R"({"type":"object","properties":{"a":{}}})"), ErrorCode::kSchemaUnsupported,
               "/properties/a", "type");
  expect_error(error_of("false"), ErrorCode::kSchemaInvalid, "", "false");
  expect_error(error_of("[]"), ErrorCode::kSchemaInvalid, "", "object");
  expect_error(error_of(R"({"type":"integer","minimum":5,"maximum":4})"), ErrorCode::kSchemaInvalid, "", "bounds");
  expect_error(error_of(R"({"type":"integer","exclusiveMinimum":4,"exclusiveMaximum":5})"),
               ErrorCode::kSchemaInvalid, "", "bounds");
  expect_error(error_of(R"({"type":"string","minLength":3,"maxLength":2})"), ErrorCode::kSchemaInvalid, "",
               "minLength");
  expect_error(error_of(R"({"type":"string","minLength":-1})"), ErrorCode::kSchemaInvalid, "/minLength",
               "non-negative");
  expect_error(error_of(R"({"type":"array","items":{"type":"null"},"minItems":3,"maxItems":2})"),
               ErrorCode::kSchemaInvalid, "", "minItems");
  expect_error(error_of(R"({"type":"object","properties":{"a":{"type":"null"}},"required":["b"]})"),
               ErrorCode::kSchemaInvalid, "/required", "'b'");
  expect_error(error_of(R"({"enum":[]})"), ErrorCode::kSchemaInvalid, "/enum", "empty");
  expect_error(error_of(R"({"type":"string","enum":[1,2]})"), ErrorCode::kSchemaInvalid, "/enum", "enum");
  expect_error(error_of(R"({"type":"strin"})"), ErrorCode::kSchemaInvalid, "/type", "strin");
  expect_error(error_of(R"({"type":"array","items":[{"type":"null"}]})"), ErrorCode::kSchemaUnsupported, "/items",
               "tuple");
  expect_error(error_of(R"({"type":"array"})"), ErrorCode::kSchemaUnsupported, "", "items");
  expect_error(error_of(R"({"type":"integer","minimum":1e30})"), ErrorCode::kSchemaUnsupported, "", "int64");
  expect_error(error_of(R"({"type":"integer","exclusiveMinimum":true})"), ErrorCode::kSchemaInvalid,
               "/exclusiveMinimum", "number");
  expect_error(error_of(R"({"type":"string","anyOf":[{"maxLength":1}]})"), ErrorCode::kSchemaUnsupported, "",
               "anyOf");
  expect_error(error_of(R"({"type":"null","type":"null"})"), ErrorCode::kSchemaInvalid, "/type", "twice");
  EXPECT_EQ(SchemaError({ErrorCode::kSchemaInvalid, "m", "/p"}).to_string(), "schema_invalid at '/p': m");
}

TEST_F(SchemaKeywords, TooComplex) {
  std::string deep = R"({"type":"null"})";
  for (int i = 0; i < 40; ++i) deep = R"({"type":"array","items":)" + deep + "}";
  const SchemaError e = error_of(deep);
  EXPECT_EQ(e.code, ErrorCode::kSchemaTooComplex);
  EXPECT_EQ(e.path.rfind("/items/items/items", 0), 0u) << e.path;
  const std::string big = R"({"type":"array","maxItems":100000,"items":{"type":"object","properties":{
      "name":{"type":"string"},"value":{"type":"integer"}}}})";
  EXPECT_EQ(error_of(big).code, ErrorCode::kSchemaTooComplex);
}

TEST_F(SchemaKeywords, VocabularyWithoutPrintableBytesIsRefused) {
  std::vector<std::string> bytes = {"a", "{", "}"};
  auto small = std::make_shared<const TokenVocabulary>(bytes, std::vector<bool>(3, false), std::vector<int32_t>{});
  auto compiled = compile_schema(R"({"type":"null"})", small);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.error().code, ErrorCode::kSchemaUnsupported);
}

}  // namespace
}  // namespace kvframe::runtime
