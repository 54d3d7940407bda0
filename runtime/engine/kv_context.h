// A session's KV state in one attention mode. Each query the session hands
// it the frame's part of the prompt (prefix, blocks); the context brings its
// KV up to date however its mode allows. The session then runs the final
// block(s) after it: on cache() itself for one query, or on branches of it
// for a batch (Model::forward_branches).
#pragma once

#include <memory>
#include <vector>

#include "kvframe/runtime_engine/session.h"
#include "prompt_parts.h"

namespace kvframe::runtime {

struct FramePrompt {
  const std::vector<TokenId>* prefix = nullptr;
  const std::vector<BlockTokenizer::Entry>* blocks = nullptr;
  // Entries the query will append to cache() after the frame (final block +
  // the most tokens it may generate); 0 when only branches read it.
  int64_t tail = 0;
};

class KvContext {
 public:
  virtual ~KvContext() = default;
  // Brings cache() up to date with the prefix and blocks. Fills report's
  // block counts, tokens_encoded and ms.encode / reposition.
  virtual Status prepare(const FramePrompt& prompt, QueryReport& report) = 0;
  // Encodes at most max_tokens (at least one block) of what prepare() would
  // have to encode for this frame, ahead of it, and keeps it for prepare();
  // returns the tokens still to encode. Counts what it ran in report's
  // blocks_encoded / tokens_encoded. The default has nothing to split:
  // prepare() does all the work at once (0 left to do here).
  virtual Result<int64_t> encode_ahead(const FramePrompt& /*prompt*/, int64_t /*max_tokens*/,
                                       QueryReport& /*report*/) {
    return int64_t{0};
  }
  // After prepare(): holds the frame's KV; a query appends to it.
  virtual KvCache& cache() = 0;
  // After the query: `appended` are the tokens run onto cache() since
  // prepare() (final block and answer; none when only branches read it).
  virtual void finish(const std::vector<TokenId>& appended) = 0;
};

// full / prefix modes over one plain causal cache of `context` tokens.
Result<std::unique_ptr<KvContext>> make_causal_context(const Model& model, AttentionMode mode, int64_t context);
// block mode over kv_diff's assembled buffer.
Result<std::unique_ptr<KvContext>> make_block_context(Engine& engine, const SessionParams& params);
// The entries a block session's assembled KV may grow to, in `layout`.
int64_t block_capacity(kv_diff::Layout layout, int64_t context);

}  // namespace kvframe::runtime
