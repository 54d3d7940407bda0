#include "prompt_parts.h"

namespace kvframe::runtime {

PromptFrame make_prompt_frame(const Tokenizer& tokenizer, const std::optional<ChatTemplate>& chat_template,
                              const std::string& system_prompt) {
  PromptFrame frame;
  if (!chat_template) {  // raw completion: the system prompt, as given, starts the text
    std::string prefix = system_prompt.empty() ? "" : system_prompt + "\n";
    frame.prefix = tokenizer.encode(prefix, tokenizer.add_bos_by_default());
    return frame;
  }
  // Render the template once around a marker that no game text contains and
  // split there, so the parts are exactly what the template would write.
  static const std::string kMarker = "\x1e\x1fkvframe-user-content\x1f\x1e";
  std::vector<ChatMessage> messages;
  if (!system_prompt.empty()) messages.push_back({"system", system_prompt});
  messages.push_back({"user", kMarker});
  const std::string rendered = chat_template->render(messages, /*add_generation_prompt=*/true);
  const size_t at = rendered.find(kMarker);
  frame.prefix = tokenizer.encode(rendered.substr(0, at));  // the template writes its own bos
  frame.final_suffix = rendered.substr(at + kMarker.size());
  return frame;
}

std::string block_prompt_text(const json_blocker::Block& block) {
  std::string text(block.text);
  text += '\n';
  return text;
}

const std::vector<BlockTokenizer::Entry>& BlockTokenizer::update(const Tokenizer& tokenizer,
                                                                 const json_blocker::Partition& partition) {
  std::unordered_map<uint64_t, std::vector<TokenId>> kept;
  kept.reserve(partition.size());
  entries_.clear();
  tokens_ = 0;
  tokenized_last_ = 0;
  for (const json_blocker::Block& block : partition.blocks()) {
    auto slot = kept.find(block.hash);
    if (slot == kept.end()) {
      auto old = by_hash_.find(block.hash);
      if (old != by_hash_.end()) {
        slot = kept.emplace(block.hash, std::move(old->second)).first;
      } else {
        slot = kept.emplace(block.hash, tokenizer.encode(block_prompt_text(block))).first;
        ++tokenized_last_;
      }
    }
    entries_.push_back({block.id_hash, block.hash, &slot->second});
    tokens_ += static_cast<int64_t>(slot->second.size());
  }
  // Pointers into `kept` stay valid when it is moved from: node-based map.
  by_hash_ = std::move(kept);
  return entries_;
}

const std::vector<BlockTokenizer::Entry>& BlockOrderer::order(const std::vector<BlockTokenizer::Entry>& document) {
  if (order_ == json_blocker::BlockOrder::kDocument) return document;
  std::unordered_map<uint64_t, uint64_t> seen;
  std::unordered_set<uint64_t> still_volatile;
  seen.reserve(document.size());
  for (const auto& entry : document) {
    const auto before = text_by_id_.find(entry.id);
    const bool changed = before == text_by_id_.end() ? !first_frame_ : before->second != entry.hash;
    if (changed || volatile_ids_.count(entry.id)) still_volatile.insert(entry.id);
    seen[entry.id] = entry.hash;
  }
  first_frame_ = false;
  text_by_id_ = std::move(seen);
  volatile_ids_ = std::move(still_volatile);
  ordered_.clear();
  for (const auto& entry : document) {
    if (!volatile_ids_.count(entry.id)) ordered_.push_back(entry);
  }
  for (const auto& entry : document) {
    if (volatile_ids_.count(entry.id)) ordered_.push_back(entry);
  }
  return ordered_;
}

}  // namespace kvframe::runtime
