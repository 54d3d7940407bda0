// Why PCRE2 and not a hand-written splitter (llama.cpp hand-writes its
// gpt2 / llama3 splits): measured, the hand-written one wins too little
// (docs/measured.md, "Pre-tokenizer"; both gave identical ids). BPE
// dominates on prose, and on JSON the split's gap is thousands of times
// less than the model's prefill of those tokens; in exchange PCRE2 runs
// the regexes exactly as tokenizer.json writes them, folds case as Oniguruma
// does ("'ſ"), and keeps no generated Unicode table or per-model split code
// in the tree.
//
// Known difference from HF: PCRE2 10.42 knows Unicode 14, HF's Oniguruma
// Unicode 16, so the 9,392 letters and digits added since (CJK extensions H
// and I, Egyptian hieroglyphs extension A, Kawi, Nag Mundari...) are
// "other" here: checked over every code point.
//
// Phi-4-mini's gpt-4o is the one split taken from llama.cpp rather than from
// its tokenizer.json: the two disagree on non-ASCII text (kGpt4o says how),
// and kvframe's reference for a GGUF file is llama.cpp on that file.
#include "pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>

namespace kvframe::runtime {
namespace {

// The regexes exactly as the models' tokenizer.json files spell them (HF
// `tokenizers` runs them with Oniguruma):
//   ByteLevel(use_regex=true), GPT-2 and SmolLM2
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
//   Llama 3: Split(Regex) before ByteLevel(use_regex=false); digits in 1-3s
constexpr const char* kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
//   Qwen2 / Qwen2.5: Llama 3's with single digits
constexpr const char* kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
//   SmolLM2: Digits(individual_digits=true) first, then ByteLevel's GPT-2 regex
constexpr const char* kEachDigit = R"(\p{N})";
//   Phi-4-mini (o200k): llama.cpp's rewrite of its tokenizer.json regex
//   (src/llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_GPT4O), not the original. The
//   original splits cased words by \p{Lu} / \p{Ll} and keeps marks (\p{M})
//   with their letters; the rewrite takes "upper" as a letter other than
//   a-z and "lower" as a letter other than A-Z, so a non-ASCII letter is
//   both ("éÉ" one piece there, two in transformers) and a mark is no letter.
//   llama.cpp spells those classes (?=[\p{L}])([^a-z]); [^\P{L}a-z] is the
//   same set as one class, which PCRE2 repeats without a backtracking frame
//   per character (a group per character overflows the JIT stack on long
//   words). Its contractions are case-sensitive '[sS] classes, not (?i:).
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[^\P{L}a-z]*[^\P{L}A-Z]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?)"
    R"(|[^\r\n\p{L}\p{N}]?[^\P{L}a-z]+[^\P{L}A-Z]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Oniguruma's \s is Unicode White_Space; PCRE2's (with UCP) also takes U+180E,
// which left White_Space in Unicode 6.3 (checked over every code point against
// PCRE2 10.42 and tokenizers 0.23). Spelling the set out makes them agree.
constexpr const char* kWhiteSpace =
    R"(\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// Rewrites \s and \S of an HF pattern into explicit White_Space classes.
std::string with_onig_white_space(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's') {
        out += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      } else if (e == 'S' && !in_class) {
        out += "[^" + std::string(kWhiteSpace) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[') in_class = true;
    if (c == ']') in_class = false;
    out += c;
  }
  return out;
}

}  // namespace

// One compiled pattern. PCRE2 in UTF mode with Unicode properties (UCP), JIT
// compiled; MATCH_INVALID_UTF lets it run over any bytes, where invalid
// sequences simply never match.
class PreTokenizer::Regex {
 public:
  static Result<std::shared_ptr<const Regex>> compile(std::string_view hf_pattern) {
    const std::string pattern = with_onig_white_space(hf_pattern);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error_code,
                                     &error_offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error_code, message, sizeof message);
      return Error{ErrorCode::kTokenizer, "pre-tokenizer regex does not compile at offset " +
                                              std::to_string(error_offset) + ": " +
                                              reinterpret_cast<const char*>(message)};
    }
    // Without JIT (a platform PCRE2 lacks it for) matching is slower, not wrong.
    const bool jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    return std::shared_ptr<const Regex>(new Regex(code, jit));
  }

  ~Regex() { pcre2_code_free(code_); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Isolated split of one piece: matches and the gaps between them.
  void split(std::string_view piece, std::vector<std::string_view>& out, pcre2_match_data* match) const {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
    std::size_t pos = 0;
    while (pos < piece.size()) {
      const int rc = jit_ ? pcre2_jit_match(code_, subject, piece.size(), pos, 0, match, nullptr)
                          : pcre2_match(code_, subject, piece.size(), pos, 0, match, nullptr);
      if (rc < 0) break;  // no more matches (or a matching error: the rest stays one piece)
      const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match);
      const std::size_t start = ovector[0];
      const std::size_t end = ovector[1];
      if (end == start) break;  // none of our patterns matches empty; never loop on one that would
      if (start > pos) out.push_back(piece.substr(pos, start - pos));
      out.push_back(piece.substr(start, end - start));
      pos = end;
    }
    if (pos < piece.size()) out.push_back(piece.substr(pos));
  }

 private:
  Regex(pcre2_code* code, bool jit) : code_(code), jit_(jit) {}
  pcre2_code* code_;
  bool jit_;  // pcre2_jit_match skips the checks pcre2_match repeats on every call
};

Result<PreTokenizer> PreTokenizer::create(std::string_view pre) {
  std::vector<std::string_view> patterns;
  bool ignore_merges = false;
  if (pre == "smollm") {
    patterns = {kEachDigit, kGpt2};
  } else if (pre == "llama3" || pre == "llama-bpe") {
    patterns = {kLlama3};
    ignore_merges = true;
  } else if (pre == "qwen2") {
    patterns = {kQwen2};
  } else if (pre == "gpt2" || pre == "gpt-2" || pre == "default") {
    patterns = {kGpt2};
  } else if (pre == "gpt-4o") {
    patterns = {kGpt4o};
  } else {
    return Error{ErrorCode::kTokenizer,
                 "tokenizer.ggml.pre is \"" + std::string(pre) +
                     "\", a pre-tokenizer kvframe does not implement (supported: smollm, llama3, llama-bpe, "
                     "qwen2, gpt2, default, gpt-4o)"};
  }
  std::vector<std::shared_ptr<const Regex>> steps;
  for (std::string_view p : patterns) {
    Result<std::shared_ptr<const Regex>> regex = Regex::compile(p);
    if (!regex) return regex.error();
    steps.push_back(std::move(*regex));
  }
  return PreTokenizer(std::move(steps), ignore_merges);
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  // One ovector pair is enough: the patterns have no capture groups.
  pcre2_match_data* match = pcre2_match_data_create(1, nullptr);
  std::vector<std::string_view> current{text};
  std::vector<std::string_view> next;
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    std::vector<std::string_view>& into = s + 1 == steps_.size() ? pieces : next;
    for (std::string_view piece : current) steps_[s]->split(piece, into, match);
    if (s + 1 < steps_.size()) {
      current.swap(next);
      next.clear();
    }
  }
  pcre2_match_data_free(match);
}

}  // namespace kvframe::runtime
