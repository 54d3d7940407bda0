// Byte-level BPE pre-tokenizers (internal): the regex splits that cut text
// into the pieces BPE merges within, chosen by tokenizer.ggml.pre. Each is a
// sequence of Hugging Face `Split(Regex, behavior="isolated")` steps: every
// match becomes a piece, and so does the text between matches.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "kvframe/common/error.h"

namespace kvframe::runtime {

class PreTokenizer {
 public:
  // "smollm", "llama3" / "llama-bpe", "qwen2", "gpt2" / "gpt-2" / "default",
  // "gpt-4o" (as llama.cpp splits it);
  // anything else is kTokenizer.
  static Result<PreTokenizer> create(std::string_view pre);

  // Appends the pieces of text, in order; together they are exactly text.
  // Any bytes are accepted: invalid UTF-8 never matches and so ends up in
  // the pieces between matches.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  // Llama 3's tokenizer.json sets "ignore_merges": a piece that is a whole
  // vocabulary token is taken as is, without running the merges.
  bool ignore_merges() const { return ignore_merges_; }

 private:
  class Regex;
  PreTokenizer(std::vector<std::shared_ptr<const Regex>> steps, bool ignore_merges)
      : steps_(std::move(steps)), ignore_merges_(ignore_merges) {}

  std::vector<std::shared_ptr<const Regex>> steps_;
  bool ignore_merges_;
};

}  // namespace kvframe::runtime
