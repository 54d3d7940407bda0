// SentencePiece-style BPE ('llama') on tiny vocabularies: score order, the
// "▁" prefix, byte fallback, the unknown token, unused pieces, decoding.
#include <gtest/gtest.h>

#include <algorithm>

#include "tiny_vocab.h"

namespace kvframe::test {
namespace {

using runtime::TokenId;
using runtime::Tokenizer;
using Ids = std::vector<TokenId>;

const std::string kSpace = "\xE2\x96\x81";  // "▁"

// <unk> <s> </s>, optionally the 256 byte tokens, then pieces.
struct SpmVocab {
  TinyVocab v;
  TokenId unk, bos, eos;
  TokenId byte0 = -1;  // id of <0x00>
  explicit SpmVocab(bool with_bytes = true) {
    v.model = "llama";
    v.pre.reset();
    unk = v.add("<unk>", kUnknown);
    bos = v.add("<s>", kControl);
    eos = v.add("</s>", kControl);
    v.bos = bos;
    v.eos = eos;
    v.unknown = unk;
    if (with_bytes) {
      for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        const TokenId id = v.add(name, kByte);
        if (b == 0) byte0 = id;
      }
    }
  }
  TokenId byte(uint8_t b) const { return byte0 + b; }
};

TEST(SentencePiece, MergesTheHighestScoringPieceFirst) {
  SpmVocab s;
  const TokenId space = s.v.add(kSpace, kNormal, -1.0f);
  s.v.add("a", kNormal, -5.0f);
  const TokenId b = s.v.add("b", kNormal, -5.0f);
  const TokenId space_a = s.v.add(kSpace + "a", kNormal, -2.0f);
  s.v.add("ab", kNormal, -3.0f);  // loses to "▁a", which scores higher
  const TokenId space_ab = s.v.add(kSpace + "ab", kNormal, -4.0f);
  const Tokenizer t = load_tokenizer_or_fail(s.v);
  EXPECT_EQ(t.encode("ab"), (Ids{space_ab}));  // "▁ab" = "▁a" + "b"
  EXPECT_EQ(t.encode("a b"), (Ids{space_a, space, b}));
  EXPECT_EQ(t.model(), Tokenizer::Model::kSentencePieceLlama);
}

TEST(SentencePiece, AddSpacePrefixFalseAddsNoDummySpace) {
  SpmVocab s;
  s.v.add_space_prefix = false;
  s.v.add(kSpace, kNormal, -1.0f);
  s.v.add("a", kNormal, -5.0f);
  s.v.add("b", kNormal, -5.0f);
  const TokenId ab = s.v.add("ab", kNormal, -3.0f);
  EXPECT_EQ(load_tokenizer_or_fail(s.v).encode("ab"), (Ids{ab}));
}

TEST(SentencePiece, CharactersOutsideTheVocabularyFallBackToBytes) {
  SpmVocab s;
  const TokenId space = s.v.add(kSpace, kNormal, -1.0f);
  const Tokenizer t = load_tokenizer_or_fail(s.v);
  EXPECT_EQ(t.encode("é"), (Ids{space, s.byte(0xC3), s.byte(0xA9)}));
  EXPECT_EQ(t.decode(t.encode("é\n\t!")), "é\n\t!");
  EXPECT_EQ(t.decode(t.encode("\xFF\xC3 x")), "\xFF\xC3 x");  // invalid UTF-8 too
}

TEST(SentencePiece, WithoutByteTokensUnknownCharactersAreTheUnknownToken) {
  SpmVocab s(/*with_bytes=*/false);
  const TokenId space = s.v.add(kSpace, kNormal, -1.0f);
  const TokenId a = s.v.add("a", kNormal, -1.0f);
  const Tokenizer t = load_tokenizer_or_fail(s.v);
  EXPECT_EQ(t.encode("aéa"), (Ids{space, a, s.unk, a}));
}

TEST(SentencePiece, UnusedPiecesAreSplitBackIntoTheirParts) {
  // sentencepiece merges into an unused piece, then resegments it.
  SpmVocab s;
  s.v.add_space_prefix = false;
  const TokenId a = s.v.add("a", kNormal, -5.0f);
  const TokenId b = s.v.add("b", kNormal, -5.0f);
  const TokenId c = s.v.add("c", kNormal, -5.0f);
  s.v.add("bc", kUnused, 10.0f);
  s.v.add("ab", kNormal, -3.0f);
  EXPECT_EQ(load_tokenizer_or_fail(s.v).encode("abc"), (Ids{a, b, c}));
}

TEST(SentencePiece, DecodeDropsOnlyTheDummySpace) {
  SpmVocab s;
  s.v.add(kSpace, kNormal, -1.0f);
  s.v.add(kSpace + kSpace, kNormal, -1.5f);
  s.v.add("a", kNormal, -5.0f);
  s.v.add(kSpace + "a", kNormal, -2.0f);
  const Tokenizer t = load_tokenizer_or_fail(s.v);
  for (const std::string text : {"a", " a", "  a", "a a ", "", " "}) {
    EXPECT_EQ(t.decode(t.encode(text)), text) << "'" << text << "'";
  }
  // After a bos token the space stays, as HF decodes "<s> Hello".
  Ids with_bos = t.encode("a", /*add_bos=*/true);
  EXPECT_EQ(with_bos.front(), s.bos);
  EXPECT_EQ(t.decode(with_bos), "<s> a");
}

TEST(SentencePiece, SpecialTokensSplitTheTextAndOnlyItsStartGetsTheDummySpace) {
  SpmVocab s;
  const TokenId space = s.v.add(kSpace, kNormal, -1.0f);
  const TokenId a = s.v.add("a", kNormal, -5.0f);
  const TokenId space_a = s.v.add(kSpace + "a", kNormal, -2.0f);
  const TokenId sep = s.v.add("<sep>", kUserDefined);
  const Tokenizer t = load_tokenizer_or_fail(s.v);
  EXPECT_EQ(t.encode("<s>a"), (Ids{s.bos, a}));
  EXPECT_EQ(t.decode(t.encode("<s>a")), "<s>a");
  EXPECT_EQ(t.encode("a<sep>a", false, false), (Ids{space_a, sep, a}));
  // Without parse_special, "<s>" is characters, never the control token.
  const Ids plain = t.encode("<s>", false, false);
  EXPECT_EQ(plain.front(), space);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), s.bos), 0);
  EXPECT_EQ(t.decode(plain), "<s>");
  // "<unk>" is one of HF's special tokens as well.
  EXPECT_EQ(t.encode("a<unk>"), (Ids{space_a, s.unk}));
  EXPECT_EQ(t.decode(t.encode("a<unk>")), "a<unk>");
  const Ids unk_as_text = t.encode("<unk>", false, false);
  EXPECT_EQ(std::count(unk_as_text.begin(), unk_as_text.end(), s.unk), 0);
}

TEST(SentencePieceErrors, ScoresAreRequired) {
  SpmVocab s;
  s.v.add(kSpace);  // every score 0: TinyVocab leaves the key out
  Result<Tokenizer> t = load_tokenizer(s.v);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kMissingKey);
  EXPECT_NE(t.error().message.find("tokenizer.ggml.scores"), std::string::npos);
}

TEST(SentencePieceErrors, NeitherByteTokensNorAnUnknownTokenIsAnError) {
  TinyVocab v;
  v.model = "llama";
  v.pre.reset();
  v.add("\xE2\x96\x81", kNormal, -1.0f);
  v.add("a", kNormal, -2.0f);
  Result<Tokenizer> t = load_tokenizer(v);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kTokenizer);
}

}  // namespace
}  // namespace kvframe::test
