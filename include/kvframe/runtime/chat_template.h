// Chat templates, recognised from the GGUF file's tokenizer.chat_template text.
//
// We do not run Jinja: we recognise the two template families game studios ship
// (ChatML: SmolLM2, Qwen2.x; Llama 3's header tokens) and render them in C++,
// byte-identical to transformers' apply_chat_template for the same messages.
// A template we do not recognise is an error (kUnknownTemplate), never a guess.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kvframe/runtime/error.h"
#include "kvframe/runtime/gguf.h"

namespace kvframe::runtime {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class ChatTemplate {
 public:
  enum class Kind { kChatML, kLlama3 };

  // Reads tokenizer.chat_template. kMissingKey when absent, kUnknownTemplate
  // when present but not one we recognise (the message quotes its start).
  static Result<ChatTemplate> from_gguf(const GgufFile& file);
  static Result<ChatTemplate> recognise(std::string_view template_text);

  Kind kind() const { return kind_; }
  // The prompt text for these messages; add_generation_prompt opens the
  // assistant's turn. Includes the template's default system prompt, if any
  // (SmolLM2's), when the messages have none.
  std::string render(const std::vector<ChatMessage>& messages,
                     bool add_generation_prompt = true) const;
  // The token text that ends an assistant turn: "<|im_end|>" or "<|eot_id|>".
  std::string end_of_turn() const;

 private:
  ChatTemplate(Kind kind, std::string default_system, std::string bos_text)
      : kind_(kind), default_system_(std::move(default_system)), bos_text_(std::move(bos_text)) {}
  Kind kind_;
  std::string default_system_;  // empty: none
  std::string bos_text_;        // Llama 3 templates start with the bos token text
};

}  // namespace kvframe::runtime
