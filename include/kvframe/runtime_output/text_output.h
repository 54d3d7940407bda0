// Streamed text as a game receives it: stop strings cut it, and it is handed
// on in chunks that never split a UTF-8 character and that say where
// sentences end (text-to-speech wants whole sentences). No torch.
//
//   TextOutput out({.stop = {"\n\n", "Player:"}});
//   for each decoded piece:   for (auto& c : out.push(piece)) send(c);  if (out.stopped()) break;
//   at the end:               for (auto& c : out.finish()) send(c);
//
// Everything emitted, concatenated, is the generated text up to (not
// including) the first stop string, or all of it when none occurs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvframe::runtime {

struct TextOutputParams {
  std::vector<std::string> stop;  // stop strings (empty ones are ignored)
  bool split_sentences = true;    // cut chunks at sentence ends
};

struct TextChunk {
  std::string text;           // whole UTF-8 characters (invalid bytes pass through as they came)
  bool sentence_end = false;  // the chunk ends a sentence
};

class TextOutput {
 public:
  explicit TextOutput(TextOutputParams params);

  // Text decoded since the last call (whole characters, as TextStream gives).
  // Returns the chunks now safe to hand on. Text that might still turn out to
  // begin a stop string is held back, and so is sentence-ending punctuation
  // until the next character shows whether the sentence ended ("3.5" does
  // not; "fold. Then" does). After a stop string no more text is taken.
  std::vector<TextChunk> push(std::string_view text);
  // The end of generation: what was held back (a stop string's unfinished
  // start is text after all), its sentence end marked if it ends one.
  std::vector<TextChunk> finish();

  bool stopped() const;          // a stop string occurred
  const std::string& text() const;  // everything emitted so far

 private:
  // Where the earliest stop string in held_ starts (npos: none).
  std::size_t first_stop() const;
  // The first position before `before` from which held_ is an unfinished
  // start of a stop string (npos: none).
  std::size_t first_partial_stop(std::size_t before) const;
  void emit(std::string_view text, bool sentence_end, std::vector<TextChunk>& out);
  // Emits `text` cut at sentence ends; returns how much of it was taken (the
  // rest, from punctuation whose sentence end is still undecided, stays
  // held). `final`: nothing follows `text`, so everything is taken.
  std::size_t emit_sentences(std::string_view text, bool final, std::vector<TextChunk>& out);

  TextOutputParams params_;
  std::string held_;     // not yet emitted
  std::string emitted_;  // emitted so far
  bool stopped_ = false;
};

}  // namespace kvframe::runtime
