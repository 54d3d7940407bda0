// Byte-level BPE ('gpt2') on tiny vocabularies written with GgufWriter:
// merge order, special tokens, pre-tokenizer names, any-bytes round trips.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "gguf_writer.h"
#include "tiny_vocab.h"

namespace kvframe::test {
namespace {

using runtime::TokenId;
using runtime::Tokenizer;
using Ids = std::vector<TokenId>;

TokenId byte_id(char c) { return static_cast<uint8_t>(c); }  // byte_level_vocab(): id == byte

TEST(ByteLevel, MergesApplyByRankNotByOrderInTheWord) {
  TinyVocab v = byte_level_vocab();
  const TokenId bc = v.add_merge("b", "c");  // rank 0
  const TokenId ab = v.add_merge("a", "b");  // rank 1: "abc" loses its "ab" to the better "bc"
  const Tokenizer t = load_tokenizer_or_fail(v);
  EXPECT_EQ(t.encode("abc"), (Ids{byte_id('a'), bc}));
  EXPECT_EQ(t.encode("ab"), (Ids{ab}));
}

TEST(ByteLevel, EqualRanksMergeLeftmostFirst) {
  TinyVocab v = byte_level_vocab();
  const TokenId aa = v.add_merge("a", "a");
  const Tokenizer t = load_tokenizer_or_fail(v);
  EXPECT_EQ(t.encode("aaa"), (Ids{aa, byte_id('a')}));
  EXPECT_EQ(t.encode("aaaa"), (Ids{aa, aa}));
}

TEST(ByteLevel, MergedTokensMergeFurtherAndPiecesStaySeparate) {
  TinyVocab v = byte_level_vocab();
  const TokenId he = v.add_merge("h", "e");
  v.add_merge("l", "l");
  v.add_merge("he", "ll");
  const TokenId hello = v.add_merge("hell", "o");
  const TokenId space_w = v.add_merge(" ", "w");
  const Tokenizer t = load_tokenizer_or_fail(v);
  EXPECT_EQ(t.encode("hello"), (Ids{hello}));
  EXPECT_EQ(t.encode("hello world"),
            (Ids{hello, space_w, byte_id('o'), byte_id('r'), byte_id('l'), byte_id('d')}));
  // "hello" split by the pre-tokenizer ("hel", "!", "lo") never merges across pieces.
  EXPECT_EQ(t.encode("hel!lo"), (Ids{he, byte_id('l'), byte_id('!'), byte_id('l'), byte_id('o')}));
}

TEST(ByteLevel, Llama3TakesWholeVocabularyWordsWithoutMerging) {
  // Llama 3's tokenizer.json sets ignore_merges: a piece that is a token is
  // that token, even where the merges would build it differently.
  TinyVocab v = byte_level_vocab();
  const TokenId bc = v.add_merge("b", "c");
  const TokenId abc = v.add("abc");
  for (const char* pre : {"llama3", "llama-bpe"}) {
    v.pre = pre;
    EXPECT_EQ(load_tokenizer_or_fail(v).encode("abc"), (Ids{abc})) << pre;
  }
  v.pre = "gpt2";
  EXPECT_EQ(load_tokenizer_or_fail(v).encode("abc"), (Ids{byte_id('a'), bc}));
}

TEST(ByteLevel, SpecialTokensAreMatchedBeforeBpeLongestFirst) {
  TinyVocab v = byte_level_vocab();
  const TokenId start = v.add("<|im_start|>", kControl);
  const TokenId end = v.add("<|im_end|>", kControl);
  const TokenId prefix = v.add("<|im", kControl);
  const Tokenizer t = load_tokenizer_or_fail(v);
  EXPECT_EQ(t.encode("<|im_start|>hi<|im_end|>"), (Ids{start, byte_id('h'), byte_id('i'), end}));
  EXPECT_EQ(t.encode("<|im_x"), (Ids{prefix, byte_id('_'), byte_id('x')}));
  EXPECT_TRUE(t.is_special(start));
  EXPECT_FALSE(t.is_special(byte_id('h')));
}

TEST(ByteLevel, TheLeftmostSpecialTokenWinsAsInHuggingFace) {
  // HF matches added tokens leftmost-longest: in "xyz1", "xy" starts first,
  // so the longer "yz1" (which llama.cpp would pick) is not used.
  TinyVocab v = byte_level_vocab();
  const TokenId xy = v.add("xy", kUserDefined);
  v.add("yz1", kUserDefined);
  EXPECT_EQ(load_tokenizer_or_fail(v).encode("xyz1"), (Ids{xy, byte_id('z'), byte_id('1')}));
}

TEST(ByteLevel, ParseSpecialFalseLeavesControlTokensAsTextButMatchesUserDefinedOnes) {
  TinyVocab v = byte_level_vocab();
  const TokenId end = v.add("<|im_end|>", kControl);
  const TokenId tool = v.add("<tool>", kUserDefined);
  const Tokenizer t = load_tokenizer_or_fail(v);
  const Ids plain = t.encode("a<|im_end|><tool>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), end), 0);
  EXPECT_EQ(plain.back(), tool);
  EXPECT_EQ(t.decode(plain), "a<|im_end|><tool>");
  EXPECT_EQ(t.encode("<|im_end|>", false, true), (Ids{end}));
}

TEST(ByteLevel, AddBosPrependsTheFilesBosToken) {
  TinyVocab v = byte_level_vocab();
  const TokenId bos = v.add("<|endoftext|>", kControl);
  v.bos = bos;
  v.eos = bos;
  const Tokenizer with_bos = load_tokenizer_or_fail(v);
  EXPECT_EQ(with_bos.encode("a", true), (Ids{bos, byte_id('a')}));
  EXPECT_EQ(with_bos.bos_id(), bos);
  EXPECT_EQ(with_bos.eos_id(), bos);
  const Tokenizer without = load_tokenizer_or_fail(byte_level_vocab());
  EXPECT_EQ(without.encode("a", true), (Ids{byte_id('a')}));
  EXPECT_FALSE(without.bos_id().has_value());
}

TEST(ByteLevel, AnyBytesRoundTrip) {
  TinyVocab v = byte_level_vocab();
  v.add_merge(" ", "t");
  v.add_merge("\xC3", "\xA9");
  v.add("<|im_end|>", kControl);
  const Tokenizer t = load_tokenizer_or_fail(v);
  const std::vector<std::string> invalid = {
      "\x80", "\xFF\xFE", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82", "abc\xFF" "def",
      "\xC3", "caf\xC3\xA9\xC3", "\xF0\x9F\x98", " \xF0\x9F\x98\x80 \xE2", "<|im_end|>\xFF<|im_end", "\x00\x01 t"};
  for (const std::string& s : invalid) {
    EXPECT_EQ(t.decode(t.encode(s)), s) << s;
    EXPECT_EQ(t.decode(t.encode(s, false, false)), s) << s;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string s(rng() % 48, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    ASSERT_EQ(t.decode(t.encode(s)), s);
  }
}

TEST(ByteLevel, BytesWithoutATokenAreDroppedAsHuggingFaceDoes) {
  // SmolLM2's vocabulary has no token for 0x04 (and 20 more bytes).
  TinyVocab v = byte_level_vocab();
  v.tokens[0x04] = "<unused>";
  v.types[0x04] = kUnused;
  v.add_merge("!", "!");
  const Tokenizer t = load_tokenizer_or_fail(v);
  EXPECT_EQ(t.decode(t.encode("a\x04" "b")), "ab");
  EXPECT_EQ(t.encode("!\x04!"), t.encode("!!"));
  EXPECT_TRUE(t.encode("\x04").empty());
}

TEST(ByteLevel, AcceptsTheSupportedPreTokenizerNames) {
  TinyVocab v = byte_level_vocab();
  for (const char* pre : {"smollm", "llama3", "llama-bpe", "qwen2", "gpt2", "gpt-2", "default", "gpt-4o"}) {
    v.pre = pre;
    Result<Tokenizer> t = load_tokenizer(v);
    ASSERT_TRUE(t.ok()) << pre << ": " << t.error().to_string();
    EXPECT_EQ(t->decode(t->encode("Hello, world! 123")), "Hello, world! 123");
    EXPECT_EQ(t->model(), Tokenizer::Model::kBytePairGpt2);
  }
}

TEST(ByteLevel, FindTokenLooksUpBytesAndPrefersSpecialTokens) {
  TinyVocab v = byte_level_vocab();
  const TokenId space_t = v.add_merge(" ", "t");
  const TokenId end = v.add("<|im_end|>", kControl);
  const Tokenizer t = load_tokenizer_or_fail(v);
  EXPECT_EQ(t.find_token(" t"), space_t);
  EXPECT_EQ(t.find_token("<|im_end|>"), end);
  EXPECT_EQ(t.find_token(std::string(1, '\xFF')), 0xFF);
  EXPECT_FALSE(t.find_token("no such token").has_value());
  EXPECT_EQ(t.n_vocab(), 258);
  EXPECT_EQ(t.token_bytes(space_t), " t");
  EXPECT_EQ(t.token_bytes(-1), "");
  EXPECT_EQ(t.decode({byte_id('a'), 9999, -5, byte_id('b')}), "ab");
}

// Errors: a file we cannot use says which key and why.
TEST(ByteLevelErrors, UnknownModelAndPreTokenizerAreNamed) {
  TinyVocab v = byte_level_vocab();
  v.model = "bert";
  Result<Tokenizer> t = load_tokenizer(v);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kTokenizer);
  EXPECT_NE(t.error().message.find("\"bert\""), std::string::npos) << t.error().message;

  v = byte_level_vocab();
  v.pre = "deepseek-coder";
  t = load_tokenizer(v);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kTokenizer);
  EXPECT_NE(t.error().message.find("\"deepseek-coder\""), std::string::npos) << t.error().message;
}

TEST(ByteLevelErrors, MissingKeysAreMissingKey) {
  TinyVocab no_pre = byte_level_vocab();
  no_pre.pre.reset();
  Result<Tokenizer> t = load_tokenizer(no_pre);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kMissingKey);
  EXPECT_NE(t.error().message.find("tokenizer.ggml.pre"), std::string::npos) << t.error().message;

  TinyVocab no_tokens;
  t = load_tokenizer(no_tokens);
  ASSERT_FALSE(t.ok());  // an empty array is written: the vocabulary is empty
  EXPECT_EQ(t.error().code, ErrorCode::kTokenizer);

  GgufWriter w;
  w.add_string("tokenizer.ggml.model", "gpt2");
  const std::vector<uint8_t> bytes = w.bytes();
  Result<runtime::GgufFile> file = runtime::GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  t = Tokenizer::from_gguf(*file);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kMissingKey);
  EXPECT_NE(t.error().message.find("tokenizer.ggml.tokens"), std::string::npos) << t.error().message;
}

TEST(ByteLevelErrors, InconsistentVocabulariesAreTokenizerErrors) {
  TinyVocab short_types = byte_level_vocab();
  short_types.types.pop_back();
  EXPECT_EQ(load_tokenizer(short_types).error().code, ErrorCode::kTokenizer);

  TinyVocab bad_type = byte_level_vocab();
  bad_type.types[7] = 9;
  EXPECT_EQ(load_tokenizer(bad_type).error().code, ErrorCode::kTokenizer);

  TinyVocab bad_bos = byte_level_vocab();
  bad_bos.bos = 256;
  Result<Tokenizer> t = load_tokenizer(bad_bos);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kTokenizer);
  EXPECT_NE(t.error().message.find("bos_token_id"), std::string::npos) << t.error().message;
}

TEST(ByteLevelErrors, AMistypedKeyIsWrongKeyType) {
  GgufWriter w;
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string("tokenizer.ggml.pre", "gpt2");
  w.add_u32("tokenizer.ggml.tokens", 3);
  const std::vector<uint8_t> bytes = w.bytes();
  Result<runtime::GgufFile> file = runtime::GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(Tokenizer::from_gguf(*file).error().code, ErrorCode::kWrongKeyType);
}

TEST(ByteLevelErrors, TokenTypesAreOptional) {
  TinyVocab v = byte_level_vocab();
  v.write_types = false;
  Result<Tokenizer> t = load_tokenizer(v);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->decode(t->encode("ok")), "ok");
}

TEST(ByteLevelErrors, MergesNamingUnknownTokensAreSkipped) {
  TinyVocab v = byte_level_vocab();
  v.merges.push_back("zz q");       // "zzq" is not a token
  v.merges.push_back("nospace");    // not a pair at all
  const TokenId ab = v.add_merge("a", "b");
  Result<Tokenizer> t = load_tokenizer(v);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->encode("ab"), (Ids{ab}));
}

TEST(ByteLevel, AddBosByDefaultFollowsTheFileAndNeedsABosToken) {
  TinyVocab v = byte_level_vocab();
  const runtime::TokenId bos = v.add("<|begin_of_text|>", kControl);
  EXPECT_FALSE(load_tokenizer(v)->add_bos_by_default());  // absent: false
  v.add_bos_token = true;
  EXPECT_FALSE(load_tokenizer(v)->add_bos_by_default());  // no bos id to add
  v.bos = bos;
  EXPECT_TRUE(load_tokenizer(v)->add_bos_by_default());
  v.add_bos_token = false;
  EXPECT_FALSE(load_tokenizer(v)->add_bos_by_default());
}

}  // namespace
}  // namespace kvframe::test
