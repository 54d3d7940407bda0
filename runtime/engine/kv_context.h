// A session's KV state in one attention mode. Each query the session hands
// it the whole prompt (prefix, blocks, final block); the context brings its KV
// up to date however its mode allows, runs the final block, and returns the
// last token's logits with the cache ready for decoding.
#pragma once

#include <memory>
#include <vector>

#include "kvframe/runtime/session.h"
#include "prompt_parts.h"

namespace kvframe::runtime {

struct Prompt {
  const std::vector<TokenId>* prefix = nullptr;
  const std::vector<BlockTokenizer::Entry>* blocks = nullptr;
  const std::vector<TokenId>* final_block = nullptr;
};

class KvContext {
 public:
  virtual ~KvContext() = default;
  // Fills report's block counts, tokens_encoded and ms.encode / reposition /
  // query_prefill. Returns fp32 logits [1, n_vocab] of the final block's last token.
  virtual Result<at::Tensor> prefill(const Prompt& prompt, QueryReport& report) = 0;
  // The cache to decode into after prefill().
  virtual KvCache& cache() = 0;
  // After decoding: `generated` are the tokens decoded (the cache holds all
  // but possibly the last).
  virtual void finish(const std::vector<TokenId>& generated) = 0;
};

// full / prefix modes over one plain causal cache of `context` tokens.
Result<std::unique_ptr<KvContext>> make_causal_context(const Model& model, AttentionMode mode, int64_t context);
// block mode over kv_diff's assembled buffer.
Result<std::unique_ptr<KvContext>> make_block_context(Engine& engine, const SessionParams& params);

}  // namespace kvframe::runtime
