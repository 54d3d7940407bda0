#include "token_masks.h"

#include "json_leaves.h"

#include <algorithm>

namespace kvframe::runtime {

void TokenMask::assign(std::vector<int32_t> ids, int32_t vocab_size) {
  if (!std::is_sorted(ids.begin(), ids.end())) std::sort(ids.begin(), ids.end());
  bits_.assign((static_cast<size_t>(std::max(vocab_size, 0)) + 63) / 64, 0);
  for (int32_t id : ids) bits_[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
  ids_ = std::move(ids);
}

namespace {

// Content tokens longer than this go to the non-content trie: it bounds
// content_upto's size, and such tokens are rare.
constexpr int32_t kMaxContentCodePoints = 256;

TokenTrie build_trie(const std::vector<std::string>& bytes, std::vector<int32_t> ids) {
  TokenTrie trie;
  // Sorted by bytes, a prefix comes before its extensions and equal byte
  // strings sit together: the trie is then built in preorder in one pass.
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return bytes[static_cast<size_t>(a)] < bytes[static_cast<size_t>(b)]; });
  trie.tokens = std::move(ids);
  std::vector<int32_t> open;  // open[d]: the node at depth d+1 on the current path
  const std::string* previous = nullptr;
  for (size_t i = 0; i < trie.tokens.size(); ++i) {
    const std::string& s = bytes[static_cast<size_t>(trie.tokens[i])];
    size_t common = 0;
    if (previous != nullptr) {
      while (common < s.size() && common < previous->size() && s[common] == (*previous)[common]) ++common;
    }
    if (previous != nullptr && common == s.size() && common == previous->size()) {
      ++trie.nodes[static_cast<size_t>(open.back())].token_end;  // the same bytes as the previous token
      continue;
    }
    while (open.size() > common) {
      trie.nodes[static_cast<size_t>(open.back())].subtree_end = static_cast<int32_t>(trie.nodes.size());
      open.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      open.push_back(static_cast<int32_t>(trie.nodes.size()));
      trie.nodes.push_back({0, 0, 0, static_cast<uint16_t>(d + 1), static_cast<uint8_t>(s[d])});
    }
    TokenTrie::Node& end = trie.nodes[static_cast<size_t>(open.back())];
    end.token_begin = static_cast<int32_t>(i);
    end.token_end = static_cast<int32_t>(i + 1);
    trie.max_depth = std::max(trie.max_depth, static_cast<int32_t>(s.size()));
    previous = &s;
  }
  for (int32_t node : open) trie.nodes[static_cast<size_t>(node)].subtree_end = static_cast<int32_t>(trie.nodes.size());
  return trie;
}

}  // namespace

void TokenMask::assign_bits(std::vector<uint64_t> bits) {
  size_t count = 0;
  for (uint64_t word : bits) count += static_cast<size_t>(__builtin_popcountll(word));
  ids_.clear();
  ids_.reserve(count);
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint64_t word = bits[w]; word != 0; word &= word - 1) {
      ids_.push_back(static_cast<int32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(word))));
    }
  }
  bits_ = std::move(bits);
}

TokenVocabulary::TokenVocabulary(std::vector<std::string> bytes, std::vector<bool> special,
                                 std::vector<int32_t> end_tokens)
    : impl_(std::make_unique<Impl>()) {
  Impl& v = *impl_;
  v.bytes = std::move(bytes);
  v.special = std::move(special);
  v.special.resize(v.bytes.size(), false);
  v.end_tokens = std::move(end_tokens);
  std::vector<bool> is_end(v.bytes.size(), false);
  for (int32_t t : v.end_tokens) {
    if (t >= 0 && static_cast<size_t>(t) < v.bytes.size()) is_end[static_cast<size_t>(t)] = true;
  }
  std::vector<int32_t> all, non_content;
  std::vector<std::pair<int32_t, int32_t>> content;  // (code points, token)
  int32_t most_code_points = 0;
  for (size_t t = 0; t < v.bytes.size(); ++t) {
    // Tokens longer than a trie depth can count are never part of a JSON value worth writing.
    if (v.special[t] || is_end[t] || v.bytes[t].empty() || v.bytes[t].size() > UINT16_MAX) continue;
    const auto id = static_cast<int32_t>(t);
    all.push_back(id);
    if (v.bytes[t].size() == 1) v.single.set(static_cast<uint8_t>(v.bytes[t][0]));
    const int32_t code_points = schema::content_code_points(v.bytes[t]);
    if (code_points > 0 && code_points <= kMaxContentCodePoints) {
      content.emplace_back(code_points, id);
      most_code_points = std::max(most_code_points, code_points);
    } else {
      non_content.push_back(id);
    }
  }
  v.trie = build_trie(v.bytes, std::move(all));
  v.non_content = build_trie(v.bytes, std::move(non_content));
  const size_t words = (v.bytes.size() + 63) / 64;
  v.content_upto.assign(static_cast<size_t>(most_code_points) + 1, std::vector<uint64_t>(words, 0));
  for (const auto& [code_points, id] : content) {
    v.content_upto[static_cast<size_t>(code_points)][static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63);
  }
  for (size_t k = 1; k < v.content_upto.size(); ++k) {
    for (size_t w = 0; w < words; ++w) v.content_upto[k][w] |= v.content_upto[k - 1][w];
  }
}

TokenVocabulary::~TokenVocabulary() = default;
int32_t TokenVocabulary::size() const { return static_cast<int32_t>(impl_->bytes.size()); }
const std::string& TokenVocabulary::bytes(int32_t token) const { return impl_->bytes[static_cast<size_t>(token)]; }
const std::vector<int32_t>& TokenVocabulary::end_tokens() const { return impl_->end_tokens; }

namespace schema {

namespace {

void set_bit(std::vector<uint64_t>& bits, int32_t token) {
  bits[static_cast<size_t>(token) >> 6] |= uint64_t{1} << (token & 63);
}

// The trie's tokens that lead from `state` to a live state needing at most `limit` bytes.
void walk_trie(const TokenTrie& trie, LazyDfa& dfa, int32_t state, int32_t limit, std::vector<uint64_t>& bits,
               int32_t& max_need) {
  // at[d]: the DFA state after the first d bytes of the current trie path.
  std::vector<int32_t> at(static_cast<size_t>(trie.max_depth) + 1, state);
  const auto& nodes = trie.nodes;
  for (size_t i = 0; i < nodes.size();) {
    const TokenTrie::Node& node = nodes[i];
    const int32_t next = dfa.next(at[node.depth - 1u], node.byte);
    if (next == LazyDfa::kDead) {
      i = static_cast<size_t>(node.subtree_end);
      continue;
    }
    at[node.depth] = next;
    if (node.token_begin != node.token_end) {
      const int32_t need = dfa.min_bytes(next);
      if (need <= limit) {
        max_need = std::max(max_need, need);
        for (int32_t k = node.token_begin; k < node.token_end; ++k) set_bit(bits, trie.tokens[static_cast<size_t>(k)]);
      }
    }
    ++i;
  }
}

// Free text: content tokens of 1..k code points all lead to the same kind
// of state, so they are taken by count. Need falls as the count grows, so
// the allowed counts are a range [lo, hi].
void content_tokens(const TokenVocabulary::Impl& vocab, const LazyDfa::StringBoundary& at, const ByteSet& single,
                    int32_t limit, std::vector<uint64_t>& bits, int32_t& max_need) {
  const StringSpec& spec = *at.spec;
  const auto most = static_cast<int64_t>(vocab.content_upto.size()) - 1;
  const int64_t count = string_code_points(at.payload);
  const int64_t hi = spec.max == kUnbounded ? most : std::min(most, spec.max - count);
  const auto need = [&](int64_t code_points) {
    return std::min(kInf, string_min_completion(spec, string_advance(spec, at.payload, code_points), single) + at.after);
  };
  int64_t lo = 1;
  while (lo <= hi && need(lo) > limit) ++lo;
  if (lo > hi) return;
  max_need = std::max(max_need, need(lo));
  const auto& upto_hi = vocab.content_upto[static_cast<size_t>(hi)];
  const auto& below_lo = vocab.content_upto[static_cast<size_t>(lo - 1)];
  for (size_t w = 0; w < bits.size(); ++w) bits[w] |= upto_hi[w] & ~below_lo[w];
}

}  // namespace

MaskResult walk_mask(const TokenVocabulary::Impl& vocab, LazyDfa& dfa, int32_t state, int32_t limit) {
  MaskResult result;
  std::vector<uint64_t> bits((vocab.bytes.size() + 63) / 64, 0);
  LazyDfa::StringBoundary boundary{};
  if (!vocab.content_upto.empty() && dfa.string_boundary(state, boundary)) {
    content_tokens(vocab, boundary, vocab.single, limit, bits, result.max_next_need);
    walk_trie(vocab.non_content, dfa, state, limit, bits, result.max_next_need);
  } else {
    walk_trie(vocab.trie, dfa, state, limit, bits, result.max_next_need);
  }
  if (dfa.accepting(state)) {
    for (int32_t t : vocab.end_tokens) {
      if (t >= 0 && static_cast<size_t>(t) < vocab.bytes.size()) set_bit(bits, t);
    }
  }
  result.mask.assign_bits(std::move(bits));
  return result;
}

}  // namespace schema
}  // namespace kvframe::runtime
