// Chat templates, recognised from the GGUF file's tokenizer.chat_template text.
//
// We do not run Jinja: we recognise the template families game studios ship
// (ChatML: SmolLM2, Qwen2, Qwen2.5, plain ChatML; Llama 3.0's header tokens;
// Gemma 3's turns)
// and render them in C++, byte-identical to transformers' apply_chat_template
// for the same messages. Recognition compares the template with the known
// ones whitespace-, quote- and indentation-insensitively (the default system
// prompt of a ChatML template is read from it). A template we do not
// recognise is an error (kUnknownTemplate), never a guess: Llama 3.1 / 3.2's
// (dated system block, tools) included.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

class ChatTemplate {
 public:
  enum class Kind { kChatML, kLlama3, kGemma3 };

  // Reads tokenizer.chat_template. kMissingKey when absent, kUnknownTemplate
  // when present but not one we recognise (the message quotes its start).
  static Result<ChatTemplate> from_gguf(const GgufFile& file);
  static Result<ChatTemplate> recognise(std::string_view template_text);

  Kind kind() const { return kind_; }
  // The prompt text for these messages; add_generation_prompt opens the
  // assistant's turn. Includes the template's default system prompt, if any
  // (SmolLM2's), when the first message is not a system one. Roles are
  // written as given, except in Qwen2.5's template, which skips roles other
  // than system/user/assistant/tool and wraps "tool" results in
  // <tool_response>; Llama 3 trims each content as Jinja's `trim` does.
  // Gemma 3 folds a first system message into the first user turn (its
  // text, a blank line, then the user's), names the assistant "model" and
  // trims each content; roles that do not alternate user/model, which its
  // template raises an error on, are written as given.
  std::string render(const std::vector<ChatMessage>& messages,
                     bool add_generation_prompt = true) const;
  // The token text that ends an assistant turn: "<|im_end|>", "<|eot_id|>" or "<end_of_turn>".
  std::string end_of_turn() const;

 private:
  // Known templates of a family that render some messages differently.
  enum class Variant {
    kStandard,
    kQwen25,              // renders only system/user/assistant/tool; "tool" as <tool_response> in a user turn
    kLlama3FirstRelease,  // opens the assistant turn even without add_generation_prompt
  };
  ChatTemplate(Kind kind, Variant variant, std::string default_system, std::string bos_text)
      : kind_(kind),
        variant_(variant),
        default_system_(std::move(default_system)),
        bos_text_(std::move(bos_text)) {}
  std::string render_chatml(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  std::string render_llama3(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;
  std::string render_gemma3(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const;

  Kind kind_;
  Variant variant_;
  std::string default_system_;  // empty: none
  std::string bos_text_;        // Llama 3 and Gemma 3 templates start with the bos token text
};

}  // namespace kvframe::runtime
