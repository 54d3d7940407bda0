// Reference checks that need no model file: the pre-tokenizer splits of HF
// tokenizers (SmolLM2's, Llama 3's, Qwen2's and GPT-2's configurations), of
// llama.cpp for gpt-4o (Phi-4-mini: kvframe follows llama.cpp there) and
// the sentencepiece library's ids for a small trained SentencePiece BPE
// vocabulary, on the >= 500 fixture strings.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "pre_tokenizer.h"

namespace kvframe::test {
namespace {

using runtime::PreTokenizer;
using runtime::TokenId;
using runtime::Tokenizer;

// Splits every text with pre-tokenizer `name` and expects the piece lengths
// of `expected` (one array per text); returns how many pieces it checked.
std::size_t expect_piece_lengths(const char* name, const std::vector<std::string>& texts,
                                 const nlohmann::json& expected) {
  Result<PreTokenizer> pre = PreTokenizer::create(name);
  EXPECT_TRUE(pre.ok()) << pre.error().to_string();
  EXPECT_EQ(expected.size(), texts.size()) << name;
  if (!pre.ok() || expected.size() != texts.size()) return 0;
  std::size_t pieces_checked = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<std::string_view> pieces;
    pre->split(texts[i], pieces);
    std::vector<std::size_t> lengths;
    for (std::string_view p : pieces) lengths.push_back(p.size());
    EXPECT_EQ(lengths, expected[i].get<std::vector<std::size_t>>()) << name << ": \"" << printable(texts[i]) << "\"";
    pieces_checked += lengths.size();
  }
  return pieces_checked;
}

TEST(PreTokenizerReference, SplitsAsHuggingFaceTokenizers) {
  const std::vector<std::string> texts = fixture_strings();
  const nlohmann::json fixture = load_fixture("pre_tokenizer_reference.json");
  ASSERT_GE(texts.size(), 500u);
  for (const char* name : {"smollm", "llama3", "qwen2", "gpt2"}) {
    const std::size_t pieces = expect_piece_lengths(name, texts, fixture.at("pieces").at(name));
    std::printf("[ pre-tokenizer %-6s ] %zu strings, %zu pieces as HF tokenizers %s\n", name, texts.size(), pieces,
                fixture.at("tokenizers_version").get<std::string>().c_str());
  }
}

TEST(PreTokenizerReference, Gpt4oSplitsAsLlamaCpp) {
  const std::vector<std::string> texts = fixture_strings();
  const nlohmann::json fixture = load_fixture("gpt4o_llama_cpp_pieces.json");
  const std::size_t pieces = expect_piece_lengths("gpt-4o", texts, fixture.at("pieces"));
  std::printf("[ pre-tokenizer gpt-4o ] %zu strings, %zu pieces as llama.cpp (%s)\n", texts.size(), pieces,
              fixture.at("llama_cpp").get<std::string>().c_str());
}

TEST(PreTokenizerReference, Gpt4oTakesLlamaCppsCaseAndMarkClasses) {
  // Where llama.cpp's rewrite parts from Phi-4-mini's tokenizer.json
  // (pre_tokenizer.cpp): a non-ASCII letter is "upper" and "lower" both, a
  // combining mark (U+0301) is no letter (so it leads the next word, as any
  // punctuation may), contractions are case-sensitive classes, and an ASCII
  // capital still starts a word. Each as llama.cpp's unicode_regex_split()
  // splits it (make_gpt4o_split_fixture.py's driver).
  Result<PreTokenizer> pre = PreTokenizer::create("gpt-4o");
  ASSERT_TRUE(pre.ok());
  const auto split = [&](std::string_view text) {
    std::vector<std::string_view> pieces;
    pre->split(text, pieces);
    return pieces;
  };
  using Pieces = std::vector<std::string_view>;
  EXPECT_EQ(split("\u00e9\u00c9 \u00c9t\u00e9"), (Pieces{"\u00e9\u00c9", " \u00c9t\u00e9"}));
  EXPECT_EQ(split("e\u0301t\u00e9"), (Pieces{"e", "\u0301t\u00e9"}));
  EXPECT_EQ(split("camelCaseHTTPServer"), (Pieces{"camel", "Case", "HTTPServer"}));
  EXPECT_EQ(split("they're O'Brien it'\u017f"), (Pieces{"they're", " O", "'Brien", " it", "'\u017f"}));
  EXPECT_EQ(split("12345 a/b\n"), (Pieces{"123", "45", " a", "/b", "\n"}));
}

TEST(PreTokenizerReference, ContractionsFoldCaseLikeOniguruma) {
  // Llama 3 / Qwen2 match (?i:'s): HF's Oniguruma also takes "'ſ" (long s),
  // which llama.cpp's '[sS] rewrite does not.
  Result<PreTokenizer> pre = PreTokenizer::create("llama3");
  ASSERT_TRUE(pre.ok());
  std::vector<std::string_view> pieces;
  pre->split("it'S it'ſ", pieces);
  EXPECT_EQ(pieces, (std::vector<std::string_view>{"it", "'S", " it", "'ſ"}));
}

TEST(PreTokenizerReference, LongRunsAndInvalidBytesSplitWithoutTrouble) {
  std::string long_word;  // gpt-4o's letter classes backtrack over a word as long
  for (int i = 0; i < 50000; ++i) long_word += "\u00c9A";
  for (const char* name : {"smollm", "llama3", "qwen2", "gpt2", "gpt-4o"}) {
    Result<PreTokenizer> pre = PreTokenizer::create(name);
    ASSERT_TRUE(pre.ok());
    for (const std::string& text : {std::string(200000, ' '), std::string(200000, 'a'), std::string(100000, '7'),
                                    std::string("ab\xFF\xC3(cd\xE2\x82") + std::string(5000, '\x80'), long_word,
                                    std::string(200000, 'A')}) {
      std::vector<std::string_view> pieces;
      pre->split(text, pieces);
      std::string joined;
      for (std::string_view p : pieces) joined += p;
      EXPECT_EQ(joined, text) << name;
    }
  }
}

TEST(SentencePieceReference, EncodesAsTheSentencepieceLibrary) {
  const std::string path = fixture_path("spm_bpe_1500.gguf");
  Result<runtime::GgufFile> file = runtime::GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  Result<Tokenizer> t = Tokenizer::from_gguf(*file);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->model(), Tokenizer::Model::kSentencePieceLlama);

  const std::vector<std::string> texts = fixture_strings();
  const nlohmann::json fixture = load_fixture("sentencepiece_reference.json");
  const nlohmann::json& expected = fixture.at("ids");
  ASSERT_EQ(expected.size(), texts.size());
  std::size_t tokens = 0;
  std::size_t round_trips = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    // sentencepiece matches user-defined pieces but not control ones: parse_special=false.
    const std::vector<TokenId> ids = t->encode(texts[i], false, false);
    EXPECT_EQ(ids, ids_of(expected[i])) << "\"" << printable(texts[i]) << "\"";
    tokens += ids.size();
    // "▁" in the text decodes as a space, in sentencepiece too.
    if (texts[i].find("\xE2\x96\x81") != std::string::npos) continue;
    EXPECT_EQ(t->decode(ids), texts[i]) << "\"" << printable(texts[i]) << "\"";
    ++round_trips;
  }
  std::printf("[ sentencepiece ] %zu strings, %zu tokens as sentencepiece %s; %zu round trips\n", texts.size(),
              tokens, fixture.at("sentencepiece_version").get<std::string>().c_str(), round_trips);
}

}  // namespace
}  // namespace kvframe::test
