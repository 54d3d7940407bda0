#include "kvframe/runtime_output/text_output.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvframe::runtime {
namespace {

// A chunk as the tests write it: its text, and '|' after a sentence end.
std::string show(const std::vector<TextChunk>& chunks) {
  std::string out;
  for (const TextChunk& c : chunks) {
    out += "[" + c.text + (c.sentence_end ? "|]" : "]");
  }
  return out;
}

// Pushes every piece, then finishes; the chunks of all calls in order.
std::vector<TextChunk> run(TextOutput& out, const std::vector<std::string>& pieces) {
  std::vector<TextChunk> all;
  for (const std::string& piece : pieces) {
    for (TextChunk& c : out.push(piece)) all.push_back(std::move(c));
  }
  for (TextChunk& c : out.finish()) all.push_back(std::move(c));
  return all;
}

std::string run_show(TextOutputParams params, const std::vector<std::string>& pieces) {
  TextOutput out(std::move(params));
  return show(run(out, pieces));
}

TextOutputParams stops(std::vector<std::string> stop, bool split_sentences = false) {
  TextOutputParams p;
  p.stop = std::move(stop);
  p.split_sentences = split_sentences;
  return p;
}

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

TEST(TextOutputStop, CutAcrossPushes) {
  TextOutput out(stops({"Player:"}));
  EXPECT_EQ(show(out.push("I fold. Pl")), "[I fold. ]");  // "Pl" might start the stop string
  EXPECT_FALSE(out.stopped());
  EXPECT_EQ(show(out.push("ay")), "");
  EXPECT_EQ(show(out.push("er: raise")), "");
  EXPECT_TRUE(out.stopped());
  EXPECT_EQ(show(out.push("more")), "");
  EXPECT_EQ(show(out.finish()), "");
  EXPECT_EQ(out.text(), "I fold. ");
}

TEST(TextOutputStop, HeldStartTurnsOutToBeText) {
  TextOutput out(stops({"Player:"}));
  EXPECT_EQ(show(out.push("Play")), "");
  EXPECT_EQ(show(out.push("ing")), "[Playing]");
  EXPECT_EQ(show(out.push(" Pla")), "[ ]");
  EXPECT_EQ(show(out.finish()), "[Pla]");  // an unfinished start is text after all
  EXPECT_FALSE(out.stopped());
  EXPECT_EQ(out.text(), "Playing Pla");
}

TEST(TextOutputStop, AtStart) {
  TextOutput out(stops({"\n\n"}));
  EXPECT_EQ(show(out.push("\n\nhello")), "");
  EXPECT_TRUE(out.stopped());
  EXPECT_EQ(out.text(), "");
}

TEST(TextOutputStop, EarliestOfSeveralWins) {
  EXPECT_EQ(run_show(stops({"END", "stop"}), {"go stop now END"}), "[go ]");
  EXPECT_EQ(run_show(stops({"END", "stop"}), {"go E", "ND stop"}), "[go ]");
  EXPECT_EQ(run_show(stops({"", "x"}), {"abc"}), "[abc]");  // empty stop strings are ignored
}

TEST(TextOutputStop, OverlappingPrefixes) {
  // "ab" completes first and starts where "abc" would: it wins at once.
  TextOutput out(stops({"abc", "ab"}));
  EXPECT_EQ(show(out.push("xa")), "[x]");
  EXPECT_EQ(show(out.push("b")), "");
  EXPECT_TRUE(out.stopped());
  EXPECT_EQ(out.text(), "x");

  // "bc" completes inside a longer one that started earlier: wait for it.
  TextOutput longer(stops({"abcd", "bc"}));
  EXPECT_EQ(show(longer.push("xabc")), "[x]");
  EXPECT_FALSE(longer.stopped());
  EXPECT_EQ(show(longer.push("d")), "");
  EXPECT_TRUE(longer.stopped());
  EXPECT_EQ(longer.text(), "x");

  TextOutput shorter(stops({"abcd", "bc"}));
  EXPECT_EQ(show(shorter.push("xabc")), "[x]");
  EXPECT_EQ(show(shorter.push("e")), "[a]");  // "abcd" failed: "bc" at 2 is the first
  EXPECT_TRUE(shorter.stopped());

  TextOutput at_end(stops({"abcd", "bc"}));
  EXPECT_EQ(show(at_end.push("xabc")), "[x]");
  EXPECT_EQ(show(at_end.finish()), "[a]");
  EXPECT_TRUE(at_end.stopped());
}

TEST(TextOutputStop, MultiByteCharactersNextToStopStrings) {
  EXPECT_EQ(run_show(stops({"é!"}), {"caf", "é", "é", "!", "x"}), "[caf][é]");
  EXPECT_EQ(run_show(stops({"→ 終"}), {"a→", " ", "b→ ", "終"}), "[a][→ b]");
  EXPECT_EQ(run_show(stops({"ü"}), {"süß"}), "[s]");
  // A push that ends inside a character holds its start back.
  EXPECT_EQ(run_show(stops({}), {"a\xE2\x82", "\xAC" "b"}), "[a][€b]");
}

TEST(TextOutputSentences, EndsAtPunctuationFollowedBySpace) {
  EXPECT_EQ(run_show({}, {"I fold. Then I raise! Why? Because"}),
            "[I fold.|][ Then I raise!|][ Why?|][ Because]");
  EXPECT_EQ(run_show({}, {"Wait… what"}), "[Wait…|][ what]");
  EXPECT_EQ(run_show({}, {"Really?! Yes"}), "[Really?!|][ Yes]");
}

TEST(TextOutputSentences, NotAfterDecimalsAbbreviationsOrEllipsisBeforeALetter) {
  EXPECT_EQ(run_show({}, {"It costs 3.5 chips"}), "[It costs 3.5 chips]");
  EXPECT_EQ(run_show({}, {"see e.g.x and"}), "[see e.g.x and]");
  EXPECT_EQ(run_show({}, {"Well...maybe"}), "[Well...maybe]");
  EXPECT_EQ(run_show({}, {"Well... maybe"}), "[Well...|][ maybe]");
}

TEST(TextOutputSentences, PunctuationAtTheEndIsHeld) {
  TextOutput out({});
  EXPECT_EQ(show(out.push("It costs 3")), "[It costs 3]");
  EXPECT_EQ(show(out.push(".")), "");
  EXPECT_EQ(show(out.push("5.")), "[.5]");
  EXPECT_EQ(show(out.push(" Ok")), "[.|][ Ok]");
  EXPECT_EQ(show(out.push(".")), "");
  EXPECT_EQ(show(out.finish()), "[.|]");
  EXPECT_EQ(out.text(), "It costs 3.5. Ok.");
}

TEST(TextOutputSentences, ClosingQuotesAndBrackets) {
  EXPECT_EQ(run_show({}, {"He said \"fold.\" Then"}), "[He said \"fold.\"|][ Then]");
  EXPECT_EQ(run_show({}, {"(all in!) ok"}), "[(all in!)|][ ok]");
  EXPECT_EQ(run_show({}, {"“Go.” Now"}), "[“Go.”|][ Now]");
  EXPECT_EQ(run_show({}, {"He said \"fold.\"", " Then"}), "[He said \"fold][.\"|][ Then]");
  EXPECT_EQ(run_show({}, {"done.)"}), "[done][.)|]");  // held until finish() tells
}

TEST(TextOutputSentences, CjkTerminatorsNeedNoSpace) {
  EXPECT_EQ(run_show({}, {"我跟注。你呢？好！"}), "[我跟注。|][你呢？|][好][！|]");
  TextOutput out({});
  EXPECT_EQ(show(out.push("我跟注。")), "[我跟注]");  // a closer may still follow
  EXPECT_EQ(show(out.push("你")), "[。|][你]");
}

TEST(TextOutputSentences, Newlines) {
  EXPECT_EQ(run_show({}, {"line one\nline two\n\n\nthree"}), "[line one\n|][line two\n\n\n|][three]");
  EXPECT_EQ(run_show({}, {"a\n", "\nb"}), "[a][\n\n|][b]");  // the run stays together
  EXPECT_EQ(run_show({}, {"Done.\nNext"}), "[Done.\n|][Next]");
}

TEST(TextOutputSentences, SplittingOff) {
  TextOutputParams p;
  p.split_sentences = false;
  EXPECT_EQ(run_show(p, {"One. Two.", " Three\n"}), "[One. Two.][ Three\n]");
}

TEST(TextOutputSentences, StopStringAfterPunctuation) {
  EXPECT_EQ(run_show(stops({"Player:"}, true), {"I fold.", "Player: x"}), "[I fold][.|]");
  EXPECT_EQ(run_show(stops({"Player:"}, true), {"Hi. Pl", "ayer:"}), "[Hi.|][ ]");
}

// Random text from pieces that stress both features, pushed in random pieces
// cut at character boundaries: the chunks concatenated are the text up to
// the first stop string, each chunk is whole characters, none is empty.
TEST(TextOutputProperty, ConcatenationIsTheTextCutAtTheFirstStopString) {
  const std::vector<std::string> alphabet = {"a", "b", "c", " ", ".", "!", "?", "…", "。", "\n", "\"",
                                             "”", "é", "€", "😀", "3", "ab", "Pl"};
  const std::vector<std::vector<std::string>> stop_sets = {
      {}, {"ab"}, {"abc", "ab"}, {"abcd", "bc"}, {"é€"}, {"\n\n"}, {". a", "😀😀"}, {"a", "aa", "aaa"}};
  std::mt19937 rng(20240607);
  for (int round = 0; round < 4000; ++round) {
    const auto& stop = stop_sets[round % stop_sets.size()];
    std::vector<std::string> chars;  // whole characters
    const int length = std::uniform_int_distribution<int>(0, 40)(rng);
    for (int i = 0; i < length; ++i) {
      const std::string& piece = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
      chars.push_back(piece);
    }
    std::string whole;
    for (const std::string& c : chars) whole += c;
    std::size_t cut = std::string::npos;
    for (const std::string& s : stop) cut = std::min(cut, whole.find(s));
    const std::string expected = whole.substr(0, cut);

    std::vector<std::string> pushes;
    for (std::size_t i = 0; i < chars.size();) {
      const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 4)(rng);
      std::string push;
      for (std::size_t k = 0; k < n && i < chars.size(); ++k) push += chars[i++];
      pushes.push_back(push);
    }
    TextOutputParams params;
    params.stop = stop;
    params.split_sentences = round % 3 != 0;
    TextOutput out(params);
    std::string got;
    for (const TextChunk& c : run(out, pushes)) {
      ASSERT_FALSE(c.text.empty());
      ASSERT_TRUE(valid_utf8(c.text)) << c.text;
      got += c.text;
    }
    ASSERT_EQ(got, expected) << "text: " << whole;
    ASSERT_EQ(out.text(), expected);
    ASSERT_EQ(out.stopped(), cut != std::string::npos) << "text: " << whole;
  }
}

}  // namespace
}  // namespace kvframe::runtime
