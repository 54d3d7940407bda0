#include "kvframe/runtime_output/text_output.h"

#include <algorithm>
#include <utility>

namespace kvframe::runtime {

namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";                 // …
constexpr std::string_view kCjkTerminators[] = {"\xE3\x80\x82",       // 。
                                                "\xEF\xBC\x81",       // ！
                                                "\xEF\xBC\x9F"};      // ？
constexpr std::string_view kMultiByteClosers[] = {"\xE2\x80\x9D",     // ”
                                                  "\xE2\x80\x99"};    // ’

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Bytes a character starting with `lead` announces (1 for ASCII and for bytes
// that cannot start one: invalid bytes pass through one at a time).
std::size_t sequence_length(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1;
}

// `pos`, or the start of the character that `pos` falls inside of: cutting
// there never splits a character, whether the cut is a stop string's start
// or the end of a push that ended inside a character.
std::size_t boundary_at_or_before(std::string_view s, std::size_t pos) {
  for (std::size_t back = 1; back <= 3 && back <= pos; ++back) {
    const auto b = static_cast<unsigned char>(s[pos - back]);
    if (is_continuation(b)) continue;
    return sequence_length(b) > back ? pos - back : pos;
  }
  return pos;
}

bool starts_with_at(std::string_view s, std::size_t i, std::string_view what) {
  return s.compare(i, what.size(), what) == 0;
}

// The length of the terminator at s[i] (0 if none); `cjk` tells whether it is
// one of the full-width ones, which end a sentence without whitespace.
std::size_t terminator_at(std::string_view s, std::size_t i, bool& cjk) {
  const char c = s[i];
  if (c == '.' || c == '!' || c == '?') return 1;
  if (starts_with_at(s, i, kEllipsis)) return kEllipsis.size();
  for (std::string_view t : kCjkTerminators) {
    if (starts_with_at(s, i, t)) {
      cjk = true;
      return t.size();
    }
  }
  return 0;
}

std::size_t closer_at(std::string_view s, std::size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']') return 1;
  for (std::string_view t : kMultiByteClosers) {
    if (starts_with_at(s, i, t)) return t.size();
  }
  return 0;
}

bool is_newline(char c) { return c == '\n' || c == '\r'; }
bool is_space(char c) { return c == ' ' || c == '\t' || is_newline(c); }

std::size_t skip_newlines(std::string_view s, std::size_t i) {
  while (i < s.size() && is_newline(s[i])) ++i;
  return i;
}

// Not known yet: the text ends before what decides it, and more may follow.
constexpr std::size_t kUndecided = std::string_view::npos - 1;

// Where the sentence that a terminator at `i` may end stops: npos when it
// does not end one ("3.5", "e.g.x", "...and"), kUndecided, or the end of the
// sentence chunk: after the terminators and closers, and after the newlines
// when the whitespace that follows is a newline (so no chunk is a lone "\n").

std::size_t sentence_end_after_terminator(std::string_view s, std::size_t i, bool final) {
  bool cjk = false;
  while (i < s.size()) {
    const std::size_t n = terminator_at(s, i, cjk);
    if (n == 0) break;
    i += n;
  }
  while (i < s.size()) {
    const std::size_t n = closer_at(s, i);
    if (n == 0) break;
    i += n;
  }
  if (i == s.size()) return final ? i : kUndecided;
  if (is_newline(s[i])) {
    const std::size_t j = skip_newlines(s, i);
    return j == s.size() && !final ? kUndecided : j;
  }
  return cjk || is_space(s[i]) ? i : std::string_view::npos;
}

}  // namespace

TextOutput::TextOutput(TextOutputParams params) : params_(std::move(params)) {
  auto& stop = params_.stop;
  stop.erase(std::remove_if(stop.begin(), stop.end(), [](const std::string& s) { return s.empty(); }), stop.end());
}

bool TextOutput::stopped() const { return stopped_; }
const std::string& TextOutput::text() const { return emitted_; }

std::size_t TextOutput::first_stop() const {
  std::size_t first = std::string::npos;
  for (const std::string& s : params_.stop) first = std::min(first, held_.find(s));
  return first;
}

std::size_t TextOutput::first_partial_stop(std::size_t before) const {
  for (std::size_t q = 0; q < std::min(before, held_.size()); ++q) {
    const std::string_view rest = std::string_view(held_).substr(q);
    for (const std::string& s : params_.stop) {
      if (rest.size() < s.size() && s.compare(0, rest.size(), rest) == 0) return q;
    }
  }
  return std::string::npos;
}

void TextOutput::emit(std::string_view text, bool sentence_end, std::vector<TextChunk>& out) {
  if (text.empty()) return;
  emitted_.append(text);
  out.push_back({std::string(text), sentence_end});
}

std::size_t TextOutput::emit_sentences(std::string_view text, bool final, std::vector<TextChunk>& out) {
  if (!params_.split_sentences) {
    emit(text, false, out);
    return text.size();
  }
  std::size_t start = 0;  // of the chunk being built
  std::size_t i = 0;
  while (i < text.size()) {
    bool cjk = false;
    std::size_t end = std::string_view::npos;
    if (is_newline(text[i])) {
      end = skip_newlines(text, i);
      if (end == text.size() && !final) end = kUndecided;  // a run of newlines stays together
    } else if (terminator_at(text, i, cjk) > 0) {
      end = sentence_end_after_terminator(text, i, final);
    }
    if (end == kUndecided) {
      emit(text.substr(start, i - start), false, out);
      return i;  // held from the punctuation on
    }
    if (end == std::string_view::npos) {
      i += std::max<std::size_t>(1, terminator_at(text, i, cjk));
      continue;
    }
    emit(text.substr(start, end - start), true, out);
    start = i = end;
  }
  emit(text.substr(start), false, out);
  return text.size();
}

std::vector<TextChunk> TextOutput::push(std::string_view text) {
  std::vector<TextChunk> out;
  if (stopped_) return out;
  held_.append(text);
  const std::size_t stop = first_stop();
  // A stop string that starts before the one found (or, with none found, at
  // the end) may still complete: keep what could be its start.
  const std::size_t partial = first_partial_stop(stop == std::string::npos ? held_.size() : stop);
  if (stop != std::string::npos && partial == std::string::npos) {
    emit_sentences(std::string_view(held_).substr(0, stop), true, out);
    held_.clear();
    stopped_ = true;
    return out;
  }
  const std::size_t limit = boundary_at_or_before(held_, std::min(partial, held_.size()));
  const std::size_t taken = emit_sentences(std::string_view(held_).substr(0, limit), false, out);
  held_.erase(0, taken);
  return out;
}

std::vector<TextChunk> TextOutput::finish() {
  std::vector<TextChunk> out;
  if (stopped_) return out;
  // A stop string found while a longer one starting earlier was still open.
  const std::size_t stop = first_stop();
  stopped_ = stop != std::string::npos;
  emit_sentences(std::string_view(held_).substr(0, std::min(stop, held_.size())), true, out);
  held_.clear();
  return out;
}

}  // namespace kvframe::runtime
