// The parts of the prompt every mode reads (see session.h): the prefix, one
// token list per block, and the final block. Each part is tokenized on its
// own, so a block's tokens depend on its text alone and can be cached by it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kvframe/json_blocker/partition.h"
#include "kvframe/runtime_tokenizer/chat_template.h"
#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::runtime {

// The chat template split around the user's content: prefix_text opens the
// conversation (system turn, user turn header), final_suffix closes the user
// turn and opens the assistant's.
struct PromptFrame {
  std::vector<TokenId> prefix;
  std::string final_suffix;
};
PromptFrame make_prompt_frame(const Tokenizer& tokenizer, const std::optional<ChatTemplate>& chat_template,
                              const std::string& system_prompt);

// What a block contributes: its text ("<path>: <json>") and a newline.
std::string block_prompt_text(const json_blocker::Block& block);

// Token ids of the current frame's blocks, cached by block text hash between
// frames: only new or changed blocks are tokenized.
class BlockTokenizer {
 public:
  struct Entry {
    uint64_t id = 0;    // json_blocker id hash: stable while the block's content changes
    uint64_t hash = 0;  // text hash
    const std::vector<TokenId>* tokens = nullptr;
  };
  // Tokenizes what is new; entries point into this object until the next call.
  const std::vector<Entry>& update(const Tokenizer& tokenizer, const json_blocker::Partition& partition);
  int64_t tokens() const { return tokens_; }
  int64_t tokenized_last() const { return tokenized_last_; }  // blocks tokenized by the last update()

 private:
  std::unordered_map<uint64_t, std::vector<TokenId>> by_hash_;
  std::vector<Entry> entries_;
  int64_t tokens_ = 0;
  int64_t tokenized_last_ = 0;
};

// The order the model reads a frame's blocks in (json_blocker::BlockOrder).
// kVolatileLast keeps, per block id, whether its text ever changed; only the
// ids of the latest frame are remembered, so a block that leaves and comes
// back counts as new (volatile).
class BlockOrderer {
 public:
  explicit BlockOrderer(json_blocker::BlockOrder order) : order_(order) {}
  // `document`: a frame's entries in document order. The result points into
  // this object (or is `document` itself) until the next call.
  const std::vector<BlockTokenizer::Entry>& order(const std::vector<BlockTokenizer::Entry>& document);

 private:
  json_blocker::BlockOrder order_;
  bool first_frame_ = true;
  std::unordered_map<uint64_t, uint64_t> text_by_id_;  // id hash -> text hash, latest frame
  std::unordered_set<uint64_t> volatile_ids_;
  std::vector<BlockTokenizer::Entry> ordered_;
};

}  // namespace kvframe::runtime
