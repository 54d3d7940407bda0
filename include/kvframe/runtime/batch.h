// One call's tokens for Model::decode, the model's one batch entry point, in
// the spirit of llama.cpp's llama_batch / llama_decode: per token its id, the
// sequence it belongs to and whether its logits are kept; per sequence the
// cache it appends to, or, for block attention, the blocks over one shared
// context. forward(), forward_sequences() and encode_blocks() are helpers
// that build one (runtime/model/batch_helpers.cpp).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "kvframe/kv_core/kv_cache.h"

namespace kvframe::runtime {

// Which part of the prompt a pass runs (session.h): the frame's context
// (prefix and blocks) or the query (final block and answer). An adapter of
// scope kQuery changes the query only.
enum class PromptPart { kContext, kQuery };

// Positions are not free per token as llama_batch's are: sequence s's tokens
// take the next positions of what they follow, in batch order. Sliding
// windows and assembled caches (entries that take no position) rely on a
// sequence's entries being in position order; Model::recompute is the one
// pass at chosen positions (model.h says why it stays apart).
struct Batch {
  enum class Attention {
    // Sequence s appends its tokens to *caches[s] (distinct caches) at
    // entries cache.length .., positions cache.next_position ..; they attend
    // to every visible entry of that cache (padding masks some) and causally
    // to each other, never to another sequence: forward() for one sequence,
    // forward_sequences() for several.
    kAppend,
    // Independent blocks over one shared context: block s's tokens take
    // positions context->next_position + 0 .. and attend to every visible
    // entry of *context (null: nothing; only read) and causally to their own
    // block, never to another block. Nothing is written to a cache; the
    // blocks' keys (un-rotated) and values come back when keep_kv:
    // encode_blocks().
    kBlocks,
  };
  Attention attention = Attention::kAppend;

  // Per token. `sequence` empty: every token in sequence 0; `logits` empty:
  // each sequence's last token's kept. A sequence's tokens need not be
  // adjacent in the batch: their order within it is what counts.
  std::vector<int64_t> tokens;
  std::vector<int32_t> sequence;
  std::vector<uint8_t> logits;

  std::vector<KvCache*> caches;      // kAppend: sequence s's cache
  const KvCache* context = nullptr;  // kBlocks: the shared context (null: none)
  bool keep_kv = false;              // kBlocks: return each block's keys and values
  PromptPart part = PromptPart::kQuery;

  // Appends one token (llama.cpp's common_batch_add); `sequence` and
  // `logits` are explicit from then on.
  void add(int64_t token, int32_t in_sequence, bool keep_logits) {
    sequence.resize(tokens.size(), 0);  // empty meant all in sequence 0
    if (logits.size() != tokens.size()) logits = last_of_each_sequence();
    tokens.push_back(token);
    sequence.push_back(in_sequence);
    logits.push_back(keep_logits ? 1 : 0);
  }
  // What an empty `logits` means, spelled out: 1 for each sequence's last token.
  std::vector<uint8_t> last_of_each_sequence() const {
    std::vector<uint8_t> last(tokens.size(), 0);
    std::vector<bool> seen;
    for (size_t i = tokens.size(); i-- > 0;) {
      const auto s = static_cast<size_t>(sequence.empty() ? 0 : sequence[i]);
      if (s >= seen.size()) seen.resize(s + 1, false);
      if (!seen[s]) last[i] = 1;
      seen[s] = true;
    }
    return last;
  }
};

// What Model::decode returns.
struct Decoded {
  // fp32 [kept tokens, n_vocab]: the kept tokens' logits, in batch order.
  at::Tensor logits;
  // kBlocks with keep_kv: block s's keys (un-rotated) and values, per sequence.
  std::vector<BlockKv> blocks;
};

}  // namespace kvframe::runtime
