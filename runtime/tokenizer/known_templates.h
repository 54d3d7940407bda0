// The chat templates kvframe renders (internal), matched by canonical form
// (jinja_canonical.h): the real template texts, with the default system
// prompt of the ChatML ones left open so that SmolLM2's and Qwen2's, which
// differ only there, are one entry.
#pragma once

#include <optional>
#include <string>
#include <string_view>


namespace kvframe::runtime {

enum class KnownTemplate {
  kChatMLDefaultSystem,  // SmolLM2-Instruct, Qwen2-Instruct, Qwen1.5-Chat
  kChatML,               // plain ChatML, no system prompt of its own
  kQwen25,               // Qwen2.5-Instruct
  kLlama3,               // Meta-Llama-3-Instruct, current revision
  kLlama3FirstRelease,   // Meta-Llama-3-Instruct as first released
  kGemma3,               // Gemma 3 instruction-tuned
};

struct RecognisedTemplate {
  KnownTemplate which;
  std::string default_system;  // empty: the template has none
};

std::optional<RecognisedTemplate> match_known_template(std::string_view template_text);

}  // namespace kvframe::runtime
