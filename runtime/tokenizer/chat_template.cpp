#include "kvframe/runtime_tokenizer/chat_template.h"

#include "known_templates.h"
#include "utf8.h"

namespace kvframe::runtime {
namespace {

constexpr const char* kLlama3Bos = "<|begin_of_text|>";
constexpr const char* kGemmaBos = "<bos>";

// Code points Python's str.isspace() accepts (Unicode 14): what Jinja's trim
// filter, i.e. str.strip(), removes. Wider than ASCII: U+001C..U+001F, NEL,
// no-break and ideographic spaces, line and paragraph separators.
bool python_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

// The code point of the valid UTF-8 sequence at text[pos, pos + length).
uint32_t code_point(std::string_view text, std::size_t pos, std::size_t length) {
  const auto b0 = static_cast<uint8_t>(text[pos]);
  if (length == 1) return b0;
  uint32_t cp = b0 & (0x7Fu >> length);
  for (std::size_t i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<uint8_t>(text[pos + i]) & 0x3Fu);
  return cp;
}

// Jinja's `| trim` on text that may hold any bytes (invalid ones are not space).
std::string_view python_strip(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t length = utf8::sequence_length(text, begin);
    const bool valid = length > 1 || static_cast<uint8_t>(text[begin]) < 0x80;
    if (!valid || !python_space(code_point(text, begin, length))) break;
    begin += length;
  }
  std::size_t end = text.size();
  while (end > begin) {
    // Step back to the start of the last character.
    std::size_t start = end - 1;
    while (start > begin && end - start < 4 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) --start;
    const std::size_t length = utf8::sequence_length(text, start);
    const bool valid = start + length == end && (length > 1 || static_cast<uint8_t>(text[start]) < 0x80);
    if (!valid || !python_space(code_point(text, start, length))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

// The opening of a template, for error messages: ~80 bytes on one line.
std::string quote_start(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size() && out.size() < 80) {
    const std::size_t length = utf8::sequence_length(text, pos);
    if (text[pos] == '\n') {
      out += "\\n";
    } else {
      out.append(text, pos, length);
    }
    pos += length;
  }
  return pos < text.size() ? out + "..." : out;
}

}  // namespace

Result<ChatTemplate> ChatTemplate::recognise(std::string_view template_text) {
  if (std::optional<RecognisedTemplate> known = match_known_template(template_text)) {
    switch (known->which) {
      case KnownTemplate::kChatMLDefaultSystem:
      case KnownTemplate::kChatML:
        return ChatTemplate(Kind::kChatML, Variant::kStandard, std::move(known->default_system), "");
      case KnownTemplate::kQwen25:
        return ChatTemplate(Kind::kChatML, Variant::kQwen25, std::move(known->default_system), "");
      case KnownTemplate::kLlama3:
        return ChatTemplate(Kind::kLlama3, Variant::kStandard, "", kLlama3Bos);
      case KnownTemplate::kLlama3FirstRelease:
        return ChatTemplate(Kind::kLlama3, Variant::kLlama3FirstRelease, "", kLlama3Bos);
      case KnownTemplate::kGemma3:
        return ChatTemplate(Kind::kGemma3, Variant::kStandard, "", kGemmaBos);
    }
  }
  const bool llama3_family = template_text.find("<|start_header_id|>") != std::string_view::npos;
  if (llama3_family && template_text.find("Cutting Knowledge Date") != std::string_view::npos) {
    return Error{ErrorCode::kUnknownTemplate,
                 "tokenizer.chat_template is Llama 3.1 / 3.2's (a dated \"Cutting Knowledge Date\" system block "
                 "and tools), which kvframe does not render; it renders Llama 3.0's and ChatML (SmolLM2, Qwen2, "
                 "Qwen2.5). Template starts: \"" +
                     quote_start(template_text) + "\""};
  }
  return Error{ErrorCode::kUnknownTemplate,
               "tokenizer.chat_template is not one kvframe renders (ChatML as SmolLM2, Qwen2 and Qwen2.5 ship it; "
               "Llama 3.0; Gemma 3). Template starts: \"" +
                   quote_start(template_text) + "\""};
}

Result<ChatTemplate> ChatTemplate::from_gguf(const GgufFile& file) {
  Result<std::string> text = file.get_string("tokenizer.chat_template");
  if (!text) return text.error();
  Result<ChatTemplate> recognised = recognise(*text);
  if (!recognised || recognised->kind_ == Kind::kChatML) return recognised;
  // Llama 3 and Gemma 3 start with the bos token's text: the file's own, when it says.
  if (file.find("tokenizer.ggml.bos_token_id") == nullptr) return recognised;
  Result<int64_t> bos = file.get_int("tokenizer.ggml.bos_token_id");
  if (!bos) return bos.error();
  Result<std::vector<std::string>> tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (!tokens) return tokens.error();
  if (*bos < 0 || static_cast<uint64_t>(*bos) >= tokens->size()) {
    return Error{ErrorCode::kTokenizer, "tokenizer.ggml.bos_token_id " + std::to_string(*bos) +
                                            " is outside the vocabulary; the file is inconsistent"};
  }
  recognised->bos_text_ = (*tokens)[static_cast<std::size_t>(*bos)];
  return recognised;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  switch (kind_) {
    case Kind::kChatML: return render_chatml(messages, add_generation_prompt);
    case Kind::kLlama3: return render_llama3(messages, add_generation_prompt);
    case Kind::kGemma3: break;
  }
  return render_gemma3(messages, add_generation_prompt);
}

std::string ChatTemplate::render_chatml(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  std::string out;
  // As the templates do it: only before a first message that is not a system one.
  if (!default_system_.empty() && !messages.empty() && messages[0].role != "system") {
    out += "<|im_start|>system\n" + default_system_ + "<|im_end|>\n";
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    if (variant_ == Variant::kQwen25 && m.role == "tool") {
      // Consecutive tool results share one user turn.
      if (i == 0 || messages[i - 1].role != "tool") out += "<|im_start|>user";
      out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
      if (i + 1 == messages.size() || messages[i + 1].role != "tool") out += "<|im_end|>\n";
      continue;
    }
    if (variant_ == Variant::kQwen25 && m.role != "system" && m.role != "user" && m.role != "assistant") continue;
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

std::string ChatTemplate::render_llama3(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  std::string out;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (i == 0) out += bos_text_;
    out += "<|start_header_id|>" + messages[i].role + "<|end_header_id|>\n\n";
    out += python_strip(messages[i].content);
    out += "<|eot_id|>";
  }
  if (add_generation_prompt || variant_ == Variant::kLlama3FirstRelease) {
    out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  }
  return out;
}

std::string ChatTemplate::render_gemma3(const std::vector<ChatMessage>& messages, bool add_generation_prompt) const {
  std::string out = bos_text_;
  const bool system = !messages.empty() && messages[0].role == "system";
  for (std::size_t i = system ? 1 : 0; i < messages.size(); ++i) {
    const ChatMessage& m = messages[i];
    out += "<start_of_turn>" + (m.role == "assistant" ? std::string("model") : m.role) + "\n";
    if (system && i == 1) out += messages[0].content + "\n\n";  // untrimmed, as the template writes it
    out += python_strip(m.content);
    out += "<end_of_turn>\n";
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

std::string ChatTemplate::end_of_turn() const {
  switch (kind_) {
    case Kind::kChatML: return "<|im_end|>";
    case Kind::kLlama3: return "<|eot_id|>";
    case Kind::kGemma3: break;
  }
  return "<end_of_turn>";
}

}  // namespace kvframe::runtime
