// Chat templates: every render in fixtures/chat_templates.json (transformers'
// apply_chat_template on the real template texts) must come out byte for
// byte; templates we do not render are refused with kUnknownTemplate.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "kvframe/runtime_tokenizer/chat_template.h"
#include "tiny_vocab.h"

namespace kvframe::test {
namespace {

using runtime::ChatMessage;
using runtime::ChatTemplate;

std::string read_template(const std::string& name) { return read_fixture("templates/" + name); }

std::vector<ChatMessage> messages_of(const nlohmann::json& conversation) {
  std::vector<ChatMessage> out;
  for (const auto& m : conversation) out.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  return out;
}

TEST(ChatTemplate, RendersExactlyAsTransformers) {
  const nlohmann::json fixture = load_fixture("chat_templates.json");
  const nlohmann::json& conversations = fixture.at("conversations");
  std::size_t checked = 0;
  for (const auto& [name, info] : fixture.at("templates").items()) {
    Result<ChatTemplate> t = ChatTemplate::recognise(read_template(name));
    ASSERT_TRUE(t.ok()) << name << ": " << t.error().to_string();
    const auto kind = info.at("kind") == "chatml" ? ChatTemplate::Kind::kChatML : ChatTemplate::Kind::kLlama3;
    EXPECT_EQ(t->kind(), kind) << name;
    EXPECT_EQ(t->end_of_turn(), kind == ChatTemplate::Kind::kChatML ? "<|im_end|>" : "<|eot_id|>");
    for (const auto& render : fixture.at("renders")) {
      if (render.at("template") != name) continue;
      const auto& conversation = conversations.at(render.at("conversation").get<std::size_t>());
      const bool add_generation_prompt = render.at("add_generation_prompt").get<bool>();
      EXPECT_EQ(t->render(messages_of(conversation), add_generation_prompt), render.at("text").get<std::string>())
          << name << ", conversation " << render.at("conversation") << ", add_generation_prompt "
          << add_generation_prompt;
      ++checked;
    }
  }
  EXPECT_EQ(checked, fixture.at("renders").size());
  std::printf("[ chat templates ] %zu renders of %zu templates match transformers %s\n", checked,
              fixture.at("templates").size(), fixture.at("transformers_version").get<std::string>().c_str());
}

TEST(ChatTemplate, ReadsTheDefaultSystemPromptFromTheTemplate) {
  const std::vector<ChatMessage> user_only = {{"user", "hi"}};
  const std::string smollm = ChatTemplate::recognise(read_template("smollm2.jinja"))->render(user_only, false);
  EXPECT_EQ(smollm,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nhi<|im_end|>\n");
  const std::string qwen = ChatTemplate::recognise(read_template("qwen2_5.jinja"))->render(user_only, false);
  EXPECT_NE(qwen.find("You are Qwen, created by Alibaba Cloud. You are a helpful assistant."), std::string::npos);
  const std::string plain = ChatTemplate::recognise(read_template("chatml.jinja"))->render(user_only, true);
  EXPECT_EQ(plain, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  // No messages: transformers refuses; we render no default system prompt, as
  // the SmolLM2 template's loop would.
  EXPECT_EQ(ChatTemplate::recognise(read_template("smollm2.jinja"))->render({}, true), "<|im_start|>assistant\n");
}

TEST(ChatTemplate, RefusesLlama31AndLaterWithAClearMessage) {
  Result<ChatTemplate> t = ChatTemplate::recognise(read_template("llama3_2.jinja"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::kUnknownTemplate);
  EXPECT_NE(t.error().message.find("Llama 3.1 / 3.2"), std::string::npos) << t.error().message;
}

TEST(ChatTemplate, RefusesTemplatesItDoesNotKnowQuotingTheirStart) {
  const std::string gemma =
      "{{ bos_token }}{% for message in messages %}{{ '<start_of_turn>' + message['role'] + '\n' + "
      "message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}"
      "{{'<start_of_turn>model\n'}}{% endif %}";
  const std::string smollm = read_template("smollm2.jinja");
  const std::vector<std::string> unknown = {
      gemma,
      "",
      "not a template at all",
      // SmolLM2's with text printed outside the tags.
      "Prompt:\n" + smollm,
      // ChatML with a thinking block (Qwen3-style): not the same template.
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
      "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n<think>\n' }}"
      "{% endif %}",
      // An empty default system prompt.
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
      "'<|im_start|>system\n<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
      "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
      "'<|im_start|>assistant\n' }}{% endif %}",
      // Unterminated tag.
      "{% for message in messages %}{{ message['content'] ",
  };
  for (const std::string& text : unknown) {
    Result<ChatTemplate> t = ChatTemplate::recognise(text);
    ASSERT_FALSE(t.ok()) << text;
    EXPECT_EQ(t.error().code, ErrorCode::kUnknownTemplate);
  }
  const std::string message = ChatTemplate::recognise(gemma).error().message;
  EXPECT_NE(message.find("{{ bos_token }}{% for message in messages %}"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u);
}

// Gemma 3's instruction-tuned template (fixtures/templates/gemma3.jinja, as
// google/gemma-3-*-it ship it): the system prompt opens the first user turn,
// the assistant is "model", contents are trimmed, bos from the file.
TEST(ChatTemplate, Gemma3FoldsTheSystemPromptIntoTheFirstUserTurn) {
  TinyVocab v = byte_level_vocab();
  v.bos = v.add("<bos>", kControl);
  v.chat_template = read_template("gemma3.jinja");
  Result<ChatTemplate> t = ChatTemplate::from_gguf(*parse(v));
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->kind(), ChatTemplate::Kind::kGemma3);
  EXPECT_EQ(t->end_of_turn(), "<end_of_turn>");
  EXPECT_EQ(t->render({{"system", "You guard the gate. "}, {"user", " Who goes there?\n"}}, true),
            "<bos><start_of_turn>user\nYou guard the gate. \n\nWho goes there?<end_of_turn>\n"
            "<start_of_turn>model\n");
  EXPECT_EQ(t->render({{"user", "hi"}, {"assistant", " hello "}, {"user", "bye"}}, false),
            "<bos><start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\nhello<end_of_turn>\n"
            "<start_of_turn>user\nbye<end_of_turn>\n");
}

TEST(ChatTemplate, WhitespaceTheRendererStripsDoesNotMatter) {
  // trim_blocks / lstrip_blocks and "-" markers remove this whitespace.
  const std::string text =
      "{% for message in messages %}\n"
      "    {% if loop.first and messages[0]['role'] != 'system' %}\n"
      "        {{- '<|im_start|>system\\nBe brief.<|im_end|>\\n' -}}\n"
      "    {% endif %}\n"
      "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}\n"
      "{%- endfor %}\n"
      "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}\n";
  Result<ChatTemplate> t = ChatTemplate::recognise(text);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->render({{"user", "x"}}, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nx<|im_end|>\n");
}

TEST(ChatTemplate, FromGgufReadsTheTemplateAndTheBosText) {
  TinyVocab v = byte_level_vocab();
  v.bos = v.add("<|begin_of_text|>", kControl);
  v.chat_template = read_template("llama3.jinja");
  Result<runtime::GgufFile> file = parse(v);
  ASSERT_TRUE(file.ok());
  Result<ChatTemplate> t = ChatTemplate::from_gguf(*file);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->render({{"user", " hi "}}, true),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");

  v.tokens[static_cast<std::size_t>(*v.bos)] = "<BOS>";
  EXPECT_EQ(ChatTemplate::from_gguf(*parse(v))->render({{"user", "hi"}}, false).rfind("<BOS>", 0), 0u);

  v.chat_template.reset();
  Result<ChatTemplate> missing = ChatTemplate::from_gguf(*parse(v));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kMissingKey);
}

}  // namespace
}  // namespace kvframe::test
