// The vocabulary's byte trie and the token masks walked from it: the
// allowed tokens of a DFA state are found by walking the trie from that
// state, so a prefix many tokens share ("\u0120the", digits, "\":") is
// stepped through once, and a dead byte prunes all tokens below it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvframe/runtime_output/json_schema.h"
#include "lazy_dfa.h"
#include "schema_nodes.h"

namespace kvframe::runtime {

// A byte trie over some of the tokens, in preorder, root left out: a
// subtree is the run of nodes up to subtree_end, so a walk is one pass over
// the array, skipping dead subtrees.
struct TokenTrie {
  struct Node {
    int32_t subtree_end;             // index past the node's last descendant
    int32_t token_begin, token_end;  // tokens whose bytes end here, in `tokens`
    uint16_t depth;                  // 1 for a first byte
    uint8_t byte;
  };
  std::vector<Node> nodes;
  std::vector<int32_t> tokens;  // sorted by bytes
  int32_t max_depth = 0;
};

struct TokenVocabulary::Impl {
  std::vector<std::string> bytes;
  std::vector<bool> special;
  std::vector<int32_t> end_tokens;
  schema::ByteSet single;  // bytes some non-special token is exactly
  TokenTrie trie;          // every non-special, non-empty, non-end token
  // Free text: the tokens that are plain string content (json_leaves.h's
  // content_code_points), as bitsets by code points: content_upto[k] holds
  // those of 1..k code points. The rest are in `non_content`.
  std::vector<std::vector<uint64_t>> content_upto;
  TokenTrie non_content;
};

namespace schema {

struct MaskResult {
  TokenMask mask;  // end tokens included when the state is accepting
  int32_t max_next_need = 0;  // the largest min_bytes among the states the (non-end) tokens lead to
};

// The tokens that lead from `state` to a live state whose min_bytes is at
// most `limit` (kInf - 1: every token that keeps a completion possible).
MaskResult walk_mask(const TokenVocabulary::Impl& vocab, LazyDfa& dfa, int32_t state, int32_t limit);

}  // namespace schema
}  // namespace kvframe::runtime
