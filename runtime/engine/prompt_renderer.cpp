// PromptRenderer: a session's prompts without its KV (session.h). It reads a
// frame with the session's own parts (prompt_parts.h), so what training sees
// is what a query reads.
#include "kvframe/json_blocker/partition.h"
#include "kvframe/runtime_engine/session.h"
#include "prompt_parts.h"

namespace kvframe::runtime {

struct PromptRenderer::Impl {
  const Engine& engine;
  json_blocker::Rules rules;  // with `frame`, all of the session's params a prompt depends on
  PromptFrame frame;
  BlockTokenizer blocks;
  BlockOrderer order;
};

PromptRenderer::PromptRenderer(const Engine& engine, SessionParams params) {
  PromptFrame frame = make_prompt_frame(engine.tokenizer(), engine.chat_template(), params.system_prompt);
  const json_blocker::BlockOrder order = params.rules.order;
  impl_.reset(new Impl{engine, std::move(params.rules), std::move(frame), BlockTokenizer(), BlockOrderer(order)});
}
PromptRenderer::~PromptRenderer() = default;
PromptRenderer::PromptRenderer(PromptRenderer&&) noexcept = default;
PromptRenderer& PromptRenderer::operator=(PromptRenderer&&) noexcept = default;

Result<PromptSample> PromptRenderer::render(std::string_view frame_json, const std::string& instruction) {
  Impl& m = *impl_;
  if (auto checked = json_blocker::check_rules(m.rules); !checked.ok()) {
    return Error{ErrorCode::kInvalidArgument, "bad block rules: " + checked.error().to_string()};
  }
  if (instruction.empty()) return Error{ErrorCode::kInvalidArgument, "the task's instruction is empty"};
  auto partition = json_blocker::partition(frame_json, m.rules);
  if (!partition) return Error{ErrorCode::kInvalidArgument, "the frame: " + partition.error().to_string()};
  PromptSample sample;
  sample.prefix = m.frame.prefix;
  for (const BlockTokenizer::Entry& entry : m.order.order(m.blocks.update(m.engine.tokenizer(), *partition))) {
    sample.blocks.push_back(*entry.tokens);
  }
  sample.final_block = m.engine.tokenizer().encode(instruction + m.frame.final_suffix);
  return sample;
}

}  // namespace kvframe::runtime
