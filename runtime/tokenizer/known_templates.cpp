#include "known_templates.h"

#include <vector>

#include "jinja_canonical.h"

namespace kvframe::runtime {
namespace {

// Stands for the default system prompt inside a template's string literals.
constexpr std::string_view kDefaultSystem = "@DEFAULT_SYSTEM@";

struct Known {
  KnownTemplate which;
  const char* text;
};

// SmolLM2-Instruct ("You are a helpful AI assistant named SmolLM, trained by
// Hugging Face") and Qwen2 / Qwen1.5-Chat ("You are a helpful assistant."):
// the default system prompt goes before the first message unless it is one.
constexpr const char* kChatMLDefaultSystem =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\n@DEFAULT_SYSTEM@<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// Plain ChatML, no system prompt of its own (transformers' former default).
constexpr const char* kChatML =
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

// Qwen2.5-Instruct ("You are Qwen, created by Alibaba Cloud. You are a
// helpful assistant."). Its tool branches only run when tools are passed,
// which kvframe never does.
constexpr const char* kQwen25 = R"QWEN({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- '@DEFAULT_SYSTEM@' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\n@DEFAULT_SYSTEM@<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)QWEN";

// Meta-Llama-3-8B-Instruct, as revised to honour add_generation_prompt...
constexpr const char* kLlama3 =
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim "
    "+ '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

// ...and as first released, opening the assistant's turn every time.
constexpr const char* kLlama3FirstRelease =
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim "
    "+ '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
    "{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}";

// Gemma 3 instruction-tuned (google/gemma-3-*-it): a system message is
// folded into the first user turn; the image branch only runs for list
// contents, which kvframe never passes.
constexpr const char* kGemma3 = R"GEMMA({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '

' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '

' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '
' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>
' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model
'}}
{%- endif -%})GEMMA";

const Known kKnown[] = {
    {KnownTemplate::kChatMLDefaultSystem, kChatMLDefaultSystem},
    {KnownTemplate::kChatML, kChatML},
    {KnownTemplate::kQwen25, kQwen25},
    {KnownTemplate::kLlama3, kLlama3},
    {KnownTemplate::kLlama3FirstRelease, kLlama3FirstRelease},
    {KnownTemplate::kGemma3, kGemma3},
};

// A known template's canonical form, cut where the default system prompt goes.
struct Pattern {
  KnownTemplate which;
  std::vector<std::string> parts;
};

const std::vector<Pattern>& patterns() {
  static const std::vector<Pattern> all = [] {
    std::vector<Pattern> out;
    for (const Known& known : kKnown) {
      const std::string canonical = *canonical_form(known.text);
      Pattern p{known.which, {}};
      std::size_t from = 0;
      for (std::size_t at = canonical.find(kDefaultSystem); at != std::string::npos;
           at = canonical.find(kDefaultSystem, from)) {
        p.parts.push_back(canonical.substr(from, at - from));
        from = at + kDefaultSystem.size();
      }
      p.parts.push_back(canonical.substr(from));
      out.push_back(std::move(p));
    }
    return out;
  }();
  return all;
}

// Matches canonical text against a pattern; every default-system slot must
// hold the same non-empty text, which it returns.
std::optional<std::string> match(const Pattern& pattern, const std::string& canonical) {
  const std::vector<std::string>& parts = pattern.parts;
  if (canonical.compare(0, parts[0].size(), parts[0]) != 0) return std::nullopt;
  std::size_t pos = parts[0].size();
  std::optional<std::string> slot;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    // The slot ends its string literal together with the literal text that
    // follows it in the pattern (e.g. "<|im_end|>\n").
    const std::size_t literal_end = canonical.find(kCanonicalQuote, pos);
    const std::size_t tail = parts[k].find(kCanonicalQuote);
    if (literal_end == std::string::npos || tail == std::string::npos || literal_end - pos <= tail) {
      return std::nullopt;
    }
    const std::size_t slot_end = literal_end - tail;
    std::string value = canonical.substr(pos, slot_end - pos);
    if (slot && *slot != value) return std::nullopt;
    slot = std::move(value);
    if (canonical.compare(slot_end, parts[k].size(), parts[k]) != 0) return std::nullopt;
    pos = slot_end + parts[k].size();
  }
  if (pos != canonical.size()) return std::nullopt;
  return slot.value_or("");
}

}  // namespace

std::optional<RecognisedTemplate> match_known_template(std::string_view template_text) {
  const std::optional<std::string> canonical = canonical_form(template_text);
  if (!canonical) return std::nullopt;
  for (const Pattern& pattern : patterns()) {
    if (std::optional<std::string> system = match(pattern, *canonical)) {
      return RecognisedTemplate{pattern.which, std::move(*system)};
    }
  }
  return std::nullopt;
}

}  // namespace kvframe::runtime
