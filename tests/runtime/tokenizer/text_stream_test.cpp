// TextStream never splits a UTF-8 character, lets invalid bytes through at
// once, and adds up to decode(); the UTF-8 helpers underneath.
#include <gtest/gtest.h>

#include <random>

#include "tiny_vocab.h"
#include "utf8.h"

namespace kvframe::test {
namespace {

using runtime::TextStream;
using runtime::TokenId;
using runtime::Tokenizer;
namespace utf8 = runtime::utf8;

// byte_level_vocab(): token id == byte value.
std::vector<TokenId> byte_ids(std::string_view bytes) {
  std::vector<TokenId> ids;
  for (const char c : bytes) ids.push_back(static_cast<uint8_t>(c));
  return ids;
}

Tokenizer byte_tokenizer() { return std::move(load_tokenizer(byte_level_vocab())).value(); }

std::vector<std::string> stream(const Tokenizer& t, const std::vector<TokenId>& ids) {
  TextStream s(t);
  std::vector<std::string> chunks;
  for (const TokenId id : ids) chunks.push_back(s.push(id));
  chunks.push_back(s.finish());
  return chunks;
}

TEST(TextStream, HoldsTheBytesOfACharacterUntilItIsComplete) {
  const Tokenizer t = byte_tokenizer();
  EXPECT_EQ(stream(t, byte_ids("\xC3\xA9")), (std::vector<std::string>{"", "\xC3\xA9", ""}));
  EXPECT_EQ(stream(t, byte_ids("\xF0\x9F\x98\x80!")),
            (std::vector<std::string>{"", "", "", "\xF0\x9F\x98\x80", "!", ""}));
}

TEST(TextStream, InvalidBytesGoOutAtOnce) {
  const Tokenizer t = byte_tokenizer();
  EXPECT_EQ(stream(t, byte_ids("\xFF" "a")), (std::vector<std::string>{"\xFF", "a", ""}));
  // A lead byte followed by a non-continuation can never complete.
  EXPECT_EQ(stream(t, byte_ids("\xC3" "a")), (std::vector<std::string>{"", "\xC3" "a", ""}));
  // E0 80 is an overlong form: invalid from its second byte.
  EXPECT_EQ(stream(t, byte_ids("\xE0\x80")), (std::vector<std::string>{"", "\xE0\x80", ""}));
}

TEST(TextStream, FinishReturnsAnIncompleteCharacter) {
  const Tokenizer t = byte_tokenizer();
  EXPECT_EQ(stream(t, byte_ids("a\xE2\x82")), (std::vector<std::string>{"a", "", "", "\xE2\x82"}));
}

TEST(TextStream, RandomStreamsAddUpToDecodeAndNeverEndMidCharacter) {
  TinyVocab v = byte_level_vocab();
  v.add_merge("\xC3", "\xA9");
  v.add_merge("\xE2\x82", "\xAC");  // a token ending a character another began
  v.add_merge("\xE2", "\x82");
  const Tokenizer t = std::move(load_tokenizer(v)).value();
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::vector<TokenId> ids;
    for (std::size_t n = rng() % 12; n > 0; --n) ids.push_back(static_cast<TokenId>(rng() % t.n_vocab()));
    std::string all;
    std::vector<std::size_t> boundaries;
    for (const std::string& chunk : stream(t, ids)) {
      all += chunk;
      boundaries.push_back(all.size());
    }
    // No boundary falls inside a character of the whole text.
    for (std::size_t pos = 0; pos < all.size();) {
      const std::size_t length = utf8::sequence_length(all, pos);
      for (const std::size_t b : boundaries) ASSERT_FALSE(b > pos && b < pos + length) << i;
      pos += length;
    }
    ASSERT_EQ(all, t.decode(ids));
  }
}

TEST(TextStream, SentencePieceStreamsDropTheDummySpaceAsDecodeDoes) {
  TinyVocab v;
  v.model = "llama";
  v.pre.reset();
  v.add("<unk>", kUnknown);
  const TokenId hello = v.add("\xE2\x96\x81Hello", kNormal, -1.0f);
  const Tokenizer t = std::move(load_tokenizer(v)).value();
  EXPECT_EQ(stream(t, {hello, hello}), (std::vector<std::string>{"Hello", " Hello", ""}));
  EXPECT_EQ(t.decode({hello, hello}), "Hello Hello");
}

TEST(Utf8, SequenceLengthAcceptsOnlyValidSequences) {
  EXPECT_EQ(utf8::sequence_length("a", 0), 1u);
  EXPECT_EQ(utf8::sequence_length("\xC3\xA9", 0), 2u);
  EXPECT_EQ(utf8::sequence_length("\xE2\x82\xAC", 0), 3u);
  EXPECT_EQ(utf8::sequence_length("\xF0\x9F\x98\x80", 0), 4u);
  EXPECT_EQ(utf8::sequence_length("\xC0\xAF", 0), 1u);          // overlong
  EXPECT_EQ(utf8::sequence_length("\xED\xA0\x80", 0), 1u);      // surrogate
  EXPECT_EQ(utf8::sequence_length("\xF4\x90\x80\x80", 0), 1u);  // past U+10FFFF
  EXPECT_EQ(utf8::sequence_length("\xE2\x82", 0), 1u);          // truncated
  EXPECT_EQ(utf8::sequence_length("\x80", 0), 1u);
}

TEST(Utf8, IncompleteTailIsAValidPrefixStillWaiting) {
  EXPECT_EQ(utf8::incomplete_tail(""), 0u);
  EXPECT_EQ(utf8::incomplete_tail("abc"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("a\xC3"), 1u);
  EXPECT_EQ(utf8::incomplete_tail("a\xE2\x82"), 2u);
  EXPECT_EQ(utf8::incomplete_tail("\xF0\x9F\x98"), 3u);
  EXPECT_EQ(utf8::incomplete_tail("\xF0\x9F\x98\x80"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("\xE0\x80"), 0u);  // never valid
  EXPECT_EQ(utf8::incomplete_tail("\xFF"), 0u);
  EXPECT_EQ(utf8::incomplete_tail("\x80\x80\x80"), 0u);
}

}  // namespace
}  // namespace kvframe::test
