#include "kvframe/runtime_tokenizer/tokenizer.h"

#include "utf8.h"

namespace kvframe::runtime {

TextStream::TextStream(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}

std::string TextStream::push(TokenId id) {
  pending_ += first_ ? tokenizer_->decode({id}) : tokenizer_->token_bytes(id);
  first_ = false;
  // Hold back only the start of a character still waiting for its other
  // bytes; bytes that can never become valid UTF-8 go out at once.
  const std::size_t complete = pending_.size() - utf8::incomplete_tail(pending_);
  std::string out = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return out;
}

std::string TextStream::finish() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace kvframe::runtime
