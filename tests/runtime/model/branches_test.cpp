// Batched decoding on tiny random-weight models. Model::forward_branches:
// every row of a batch against forward() on that row's own copy of the shared
// cache (what running the NPC queries one after another does).
// Model::forward_sequences: several sessions' steps, each in its own cache,
// against forward() on a copy of each cache.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <random>
#include <string>
#include <vector>

#include "kvframe/runtime/model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TinyModelSpec;
using Rows = std::vector<std::vector<int32_t>>;

// fp32 on the CPU: the batched pass and forward() differ only in summation
// order; the tiny models' logits are of magnitude ~1-10.
constexpr double kLogitAtol = 1e-4;
constexpr double kKvAtol = 1e-5;

using test::describe;
using test::random_rows;
using test::random_tokens;
std::unique_ptr<Model> load_tiny(const TinyModelSpec& spec) { return test::load_tiny_model(spec); }

// The prefix through forward() into a cache that has room for it alone.
KvCache plain_cache(const Model& model, const std::vector<int32_t>& prefix) {
  KvCache cache = *model.new_cache(std::max<int64_t>(1, static_cast<int64_t>(prefix.size())));
  if (!prefix.empty()) {
    EXPECT_TRUE(model.forward(test::token_ids(prefix), cache).ok());
  }
  return cache;
}

// A cache assembled as kv_diff leaves them: the prefix in three forward()
// passes with masked slack entries of garbage before, between and after them,
// so that next_position runs behind length.
KvCache padded_cache(const Model& model, const std::vector<int32_t>& prefix) {
  const auto n = static_cast<int64_t>(prefix.size());
  KvCache cache = *model.new_cache(n + 12);
  cache.padding = at::zeros({cache.capacity}, at::kBool);
  auto slack = [&](int64_t count) {
    for (size_t l = 0; l < cache.k.size(); ++l) {
      cache.k[l].narrow(1, cache.length, count).normal_(0, 10);
      cache.v[l].narrow(1, cache.length, count).normal_(0, 10);
    }
    cache.padding.narrow(0, cache.length, count).fill_(true);
    cache.length += count;
  };
  const std::vector<int64_t> cuts = {0, n / 3, n / 2, n};
  slack(2);
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    const std::vector<int32_t> part(prefix.begin() + cuts[i], prefix.begin() + cuts[i + 1]);
    EXPECT_TRUE(model.forward(test::token_ids(part), cache).ok());
    slack(i == 0 ? 3 : 1);
  }
  EXPECT_NE(cache.length, cache.next_position);
  return cache;
}

// What runs the queries one after another: a private copy of the shared
// cache, with room for `more` tokens.
KvCache copy_of(const Model& model, const KvCache& shared, int64_t more) {
  KvCache copy = *model.new_cache(shared.length + more);
  for (size_t l = 0; l < copy.k.size(); ++l) {
    copy.k[l].narrow(1, 0, shared.length).copy_(shared.k[l].narrow(1, 0, shared.length));
    copy.v[l].narrow(1, 0, shared.length).copy_(shared.v[l].narrow(1, 0, shared.length));
  }
  if (shared.padding.defined()) {
    copy.padding = at::zeros({copy.capacity}, at::kBool);
    copy.padding.narrow(0, 0, shared.length).copy_(shared.padding.narrow(0, 0, shared.length));
  }
  copy.length = shared.length;
  copy.next_position = shared.next_position;
  return copy;
}

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Runs `calls` (calls[c][b]: row b's tokens in call c; empty: b sits out)
// batched and row by row, and expects the same logits every call and the
// same keys and values in each branch as in the row's copy at the end.
void expect_branches_match_forward(const Model& model, const KvCache& shared, const std::vector<Rows>& calls) {
  const auto B = static_cast<int64_t>(calls.front().size());
  std::vector<int64_t> total(static_cast<size_t>(B), 0);
  for (const Rows& call : calls) {
    for (int64_t b = 0; b < B; ++b) total[b] += static_cast<int64_t>(call[b].size());
  }
  const int64_t capacity = *std::max_element(total.begin(), total.end());
  auto branches = model.new_branches(shared, B, capacity);
  ASSERT_TRUE(branches.ok()) << branches.error().to_string();
  EXPECT_EQ(branches->first_position, shared.next_position);
  std::vector<KvCache> copies;
  for (int64_t b = 0; b < B; ++b) copies.push_back(copy_of(model, shared, capacity));

  for (size_t c = 0; c < calls.size(); ++c) {
    auto got = model.forward_branches(calls[c], shared, *branches);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    ASSERT_EQ(got->sizes(), (std::vector<int64_t>{B, model.config().n_vocab}));
    ASSERT_EQ(got->scalar_type(), at::kFloat);
    for (int64_t b = 0; b < B; ++b) {
      const std::string what = "call " + std::to_string(c) + ", row " + std::to_string(b);
      if (calls[c][b].empty()) {
        EXPECT_TRUE((*got)[b].eq(0).all().item<bool>()) << what << " sat out but has logits";
        continue;
      }
      const at::Tensor want = *model.forward(test::token_ids(calls[c][b]), copies[b]);
      EXPECT_TRUE(at::allclose((*got)[b], want[0], 0.0, kLogitAtol))
          << what << ": logits differ by " << max_diff((*got)[b], want[0]);
    }
  }
  for (int64_t b = 0; b < B; ++b) {
    ASSERT_EQ(branches->length[b], total[b]);
    for (size_t l = 0; l < branches->k.size(); ++l) {
      for (const auto& [mine, theirs] : {std::pair{branches->k[l], copies[b].k[l]}, std::pair{branches->v[l], copies[b].v[l]}}) {
        const at::Tensor a = mine[b].narrow(1, 0, total[b]), e = theirs.narrow(1, shared.length, total[b]);
        EXPECT_TRUE(at::allclose(a, e, 0.0, kKvAtol)) << "row " << b << " layer " << l << ": entries differ by "
                                                      << max_diff(a, e);
      }
    }
  }
}

// A first call of ragged final blocks, then decode steps of one token a row
// in which the rows in `sits_out(call, row)` sit out.
std::vector<Rows> ragged_then_decode(const std::vector<int64_t>& first, int steps, uint32_t seed) {
  std::vector<Rows> calls = {random_rows(first, seed)};
  for (int s = 1; s <= steps; ++s) {
    Rows step;
    for (size_t b = 0; b < first.size(); ++b) {
      const bool sits_out = (b + static_cast<size_t>(s)) % 3 == 0;
      step.push_back(sits_out ? std::vector<int32_t>{}
                               : random_tokens(1, seed + 1000u * static_cast<uint32_t>(s) + static_cast<uint32_t>(b)));
    }
    calls.push_back(step);
  }
  return calls;
}

TEST(Branches, RaggedBlocksThenDecodeStepsMatchForwardPerRow) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = load_tiny(spec);
    const KvCache shared = plain_cache(*model, random_tokens(20, 1));
    std::vector<Rows> calls = ragged_then_decode({1, 5, 17, 3, 40, 9}, 5, 2);
    calls.push_back(random_rows({2, 0, 6, 1, 0, 11}, 3));  // a later ragged call
    expect_branches_match_forward(*model, shared, calls);
  }
}

TEST(Branches, PaddedSharedCacheMatchesForwardOverTheSameCache) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = load_tiny(spec);
    const KvCache shared = padded_cache(*model, random_tokens(30, 4));
    expect_branches_match_forward(*model, shared, ragged_then_decode({7, 1, 23, 12, 2}, 4, 5));
  }
}

TEST(Branches, EmptySharedCache) {
  auto model = load_tiny({});
  const KvCache shared = plain_cache(*model, {});
  ASSERT_EQ(shared.length, 0);
  expect_branches_match_forward(*model, shared, ragged_then_decode({4, 1, 13}, 3, 6));
}

TEST(Branches, OneBranchAndThirtyTwo) {
  auto model = load_tiny({});
  const KvCache shared = padded_cache(*model, random_tokens(50, 7));
  expect_branches_match_forward(*model, shared, ragged_then_decode({33}, 4, 8));
  std::vector<int64_t> lengths;
  std::mt19937 rng(9);
  for (int b = 0; b < 32; ++b) lengths.push_back(1 + static_cast<int64_t>(rng() % 60));
  expect_branches_match_forward(*model, shared, ragged_then_decode(lengths, 4, 10));
}

// Rows long enough that the attention score budget (2^26 scores) puts them in
// groups of their own and runs the longest in two chunks of query rows:
// 16 heads x 1500 queries x (1500 shared + 1500 own keys) > 2^26. Many small
// heads in one layer keep the test short. And Gemma 3's shape (layer 0 local
// at a window of 100): the window's masks in chunks too.
TEST(Branches, LongRowsRunInBoundedAttentionCalls) {
  TinyModelSpec many_heads, windowed = test::windowed_shape();
  many_heads.n_layer = 1;  // Gemma 3's pattern needs its two layers
  windowed.sliding_window = 100;
  for (TinyModelSpec spec : {many_heads, windowed}) {
    SCOPED_TRACE(describe(spec));
    spec.n_head = 16, spec.n_head_kv = 4;
    auto model = load_tiny(spec);
    const KvCache shared = plain_cache(*model, random_tokens(1500, 11));
    expect_branches_match_forward(*model, shared, {random_rows({1500, 7}, 12), random_rows({1, 1}, 13)});
  }
}

// Gemma 3's shape at a window of 5 (layer 0 local): a branch token of the
// local layer sees the 5 entries up to its own, counting back over its
// branch into the shared cache, as forward() on a copy of the shared cache
// does. Shared caches longer than the window, rows shorter and longer.
TEST(Branches, WindowedLayersMatchForwardPerRow) {
  auto model = load_tiny(test::windowed_shape());
  for (int64_t shared_tokens : {0, 3, 20}) {
    SCOPED_TRACE("shared cache of " + std::to_string(shared_tokens));
    const KvCache shared = plain_cache(*model, random_tokens(shared_tokens, 21));
    std::vector<Rows> calls = ragged_then_decode({1, 5, 17, 3, 40, 9}, 7, 22);
    calls.push_back(random_rows({2, 0, 6, 1, 0, 11}, 23));
    expect_branches_match_forward(*model, shared, calls);
  }
}

// forward() refuses a padded cache on a windowed model (padding entries are
// not positions, which windows count); so do branches over one.
TEST(Branches, WindowedModelRefusesAPaddedSharedCache) {
  auto model = load_tiny(test::windowed_shape());
  KvCache shared = plain_cache(*model, random_tokens(10, 27));
  shared.padding = at::zeros({shared.capacity}, at::kBool);  // forward() refuses to write one, so padding nothing
  auto branches = model->new_branches(shared, 2, 4);
  ASSERT_TRUE(branches.ok()) << branches.error().to_string();
  auto refused = model->forward_branches({{1}, {2}}, shared, *branches);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnsupportedArch) << refused.error().to_string();
  EXPECT_EQ(branches->length, (std::vector<int64_t>{0, 0}));
}

TEST(Branches, GreedyDecodingEqualsEachRowDecodedAlone) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = load_tiny(spec);
    const KvCache shared = padded_cache(*model, random_tokens(25, 14));
    const Rows blocks = random_rows({6, 19, 1, 8, 30, 3, 12, 5}, 15);
    constexpr int kSteps = 12;
    const auto B = static_cast<int64_t>(blocks.size());

    auto branches = *model->new_branches(shared, B, 30 + kSteps);
    std::vector<std::vector<int32_t>> batched(blocks.size());
    at::Tensor logits = *model->forward_branches(blocks, shared, branches);
    for (int s = 0; s < kSteps; ++s) {
      Rows next;
      for (int64_t b = 0; b < B; ++b) {
        batched[b].push_back(static_cast<int32_t>(logits[b].argmax().item<int64_t>()));
        next.push_back({batched[b].back()});
      }
      logits = *model->forward_branches(next, shared, branches);
    }

    for (int64_t b = 0; b < B; ++b) {
      KvCache copy = copy_of(*model, shared, 30 + kSteps);
      at::Tensor row_logits = *model->forward(test::token_ids(blocks[b]), copy);
      std::vector<int32_t> alone;
      for (int s = 0; s < kSteps; ++s) {
        alone.push_back(static_cast<int32_t>(row_logits.argmax().item<int64_t>()));
        row_logits = *model->forward(test::token_ids({alone.back()}), copy);
      }
      EXPECT_EQ(batched[b], alone) << "row " << b;
    }
  }
}

TEST(Branches, RowsThatAllSitOutChangeNothing) {
  auto model = load_tiny({});
  const KvCache shared = plain_cache(*model, random_tokens(5, 16));
  auto branches = *model->new_branches(shared, 3, 4);
  ASSERT_TRUE(model->forward_branches({{1}, {}, {2, 3}}, shared, branches).ok());
  auto none = model->forward_branches({{}, {}, {}}, shared, branches);
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_TRUE(none->eq(0).all().item<bool>());
  EXPECT_EQ(branches.length, (std::vector<int64_t>{1, 0, 2}));
}

TEST(Branches, RowTooLongIsContextFullAndLeavesTheBranches) {
  auto model = load_tiny({});
  const KvCache shared = plain_cache(*model, random_tokens(5, 17));
  auto branches = *model->new_branches(shared, 3, 8);
  ASSERT_TRUE(model->forward_branches({{1, 2, 3}, {4}, {}}, shared, branches).ok());
  std::vector<at::Tensor> before;
  for (size_t l = 0; l < branches.k.size(); ++l) before.push_back(branches.k[l].clone());

  auto full = model->forward_branches({{5}, random_tokens(8, 18), {6}}, shared, branches);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, ErrorCode::kContextFull);
  EXPECT_NE(full.error().message.find("branch 1"), std::string::npos) << full.error().message;
  EXPECT_EQ(branches.length, (std::vector<int64_t>{3, 1, 0}));
  for (size_t l = 0; l < branches.k.size(); ++l) EXPECT_TRUE(branches.k[l].equal(before[l])) << "layer " << l;

  // Exactly full is fine.
  ASSERT_TRUE(model->forward_branches({{}, random_tokens(7, 19), {}}, shared, branches).ok());
  EXPECT_EQ(branches.length[1], 8);
}

TEST(Branches, BadIdsAndMismatchedSizesAreInvalidArgument) {
  auto model = load_tiny({});
  const KvCache shared = plain_cache(*model, random_tokens(5, 20));
  auto branches = *model->new_branches(shared, 3, 8);
  auto invalid = [&](const Rows& rows, const KvCache& with, BranchCache& into, const std::string& names) {
    auto r = model->forward_branches(rows, with, into);
    ASSERT_FALSE(r.ok()) << names;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << r.error().to_string();
    EXPECT_NE(r.error().message.find(names), std::string::npos) << r.error().message;
    EXPECT_EQ(into.length, std::vector<int64_t>(into.length.size(), 0));
  };
  invalid({{1}, {2}, {3, static_cast<int32_t>(test::kTinyVocab)}}, shared, branches, "row 2");
  invalid({{-1}, {2}, {3}}, shared, branches, "row 0");
  invalid({{1}, {2}}, shared, branches, "2 token rows for 3 branches");

  TinyModelSpec mha;
  mha.n_head_kv = mha.n_head;
  auto other = load_tiny(mha);
  auto foreign = *other->new_branches(plain_cache(*other, {1}), 3, 8);
  invalid({{1}, {2}, {3}}, shared, foreign, "not a BranchCache of this model");
  invalid({{1}, {2}, {3}}, plain_cache(*other, {1}), branches, "not a KV cache of this model");

  KvCache bad_padding = plain_cache(*model, {1, 2});
  bad_padding.padding = at::zeros({7}, at::kBool);
  invalid({{1}, {2}, {3}}, bad_padding, branches, "padding");

  for (auto [count, capacity] : {std::pair{0, 8}, std::pair{2, 0}}) {
    auto made = model->new_branches(shared, count, capacity);
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().code, ErrorCode::kInvalidArgument);
  }
}

// --- forward_sequences -------------------------------------------------------

// Each call's runs (calls[c][s]: sequence s's tokens; empty: it sits out)
// through forward_sequences and through forward() on a copy of each cache:
// the same logits every call, the same entries at the end.
void expect_sequences_match_forward(const Model& model, std::vector<KvCache>& caches, const std::vector<Rows>& calls) {
  std::vector<KvCache> copies;
  int64_t room = 0;
  for (const Rows& call : calls) {
    for (const auto& run : call) room += static_cast<int64_t>(run.size());
  }
  for (const KvCache& cache : caches) copies.push_back(copy_of(model, cache, room));
  for (size_t c = 0; c < calls.size(); ++c) {
    std::vector<SequenceStep> steps;
    std::vector<size_t> who;
    for (size_t s = 0; s < caches.size(); ++s) {
      if (calls[c][s].empty()) continue;
      steps.push_back({std::vector<int64_t>(calls[c][s].begin(), calls[c][s].end()), &caches[s]});
      who.push_back(s);
    }
    auto got = model.forward_sequences(steps);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    ASSERT_EQ(got->sizes(), (std::vector<int64_t>{static_cast<int64_t>(steps.size()), model.config().n_vocab}));
    for (size_t k = 0; k < who.size(); ++k) {
      const at::Tensor want = *model.forward(test::token_ids(calls[c][who[k]]), copies[who[k]]);
      EXPECT_TRUE(at::allclose((*got)[static_cast<int64_t>(k)], want[0], 0.0, kLogitAtol))
          << "call " << c << ", sequence " << who[k] << ": logits differ by "
          << max_diff((*got)[static_cast<int64_t>(k)], want[0]);
    }
  }
  for (size_t s = 0; s < caches.size(); ++s) {
    ASSERT_EQ(caches[s].length, copies[s].length);
    ASSERT_EQ(caches[s].next_position, copies[s].next_position);
    for (size_t l = 0; l < caches[s].k.size(); ++l) {
      const int64_t n = caches[s].length;
      EXPECT_TRUE(at::allclose(caches[s].k[l].narrow(1, 0, n), copies[s].k[l].narrow(1, 0, n), 0.0, kKvAtol))
          << "sequence " << s << " layer " << l;
      EXPECT_TRUE(at::allclose(caches[s].v[l].narrow(1, 0, n), copies[s].v[l].narrow(1, 0, n), 0.0, kKvAtol))
          << "sequence " << s << " layer " << l;
    }
  }
}

// The caches of three sessions: two assembled ones (masked slack, positions
// behind entries) and a plain one, with room for what the calls append.
std::vector<KvCache> session_caches(const Model& model, int64_t room) {
  std::vector<KvCache> caches;
  caches.push_back(copy_of(model, padded_cache(model, random_tokens(20, 31)), room));
  caches.push_back(copy_of(model, plain_cache(model, random_tokens(9, 32)), room));
  caches.push_back(copy_of(model, padded_cache(model, random_tokens(33, 33)), room));
  return caches;
}

TEST(Sequences, StepsOfSeveralCachesMatchForwardOnEach) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = load_tiny(spec);
    // Decoding steps, forced runs of up to 16 tokens, and sessions sitting out.
    const std::vector<Rows> calls = {random_rows({1, 1, 1}, 40), random_rows({3, 1, 16}, 41),
                                     random_rows({1, 0, 1}, 42), random_rows({0, 5, 0}, 43),
                                     random_rows({2, 7, 1}, 44)};
    std::vector<KvCache> caches = session_caches(*model, 40);
    expect_sequences_match_forward(*model, caches, calls);
  }
}

// Runs longer than the CPU step kernels take (several sessions' final
// blocks) go through the forward pass as one packed batch: the same.
TEST(Sequences, LongRunsOfSeveralCachesMatchForwardOnEach) {
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(describe(spec));
    auto model = load_tiny(spec);
    const std::vector<Rows> calls = {random_rows({60, 50, 40}, 45), random_rows({1, 0, 90}, 46),
                                     random_rows({1, 1, 1}, 47)};
    std::vector<KvCache> caches = session_caches(*model, 200);
    expect_sequences_match_forward(*model, caches, calls);
  }
}

TEST(Sequences, BadStepsAreTypedErrorsAndChangeNoCache) {
  auto model = load_tiny(TinyModelSpec{});
  std::vector<KvCache> caches = session_caches(*model, 2);
  const std::vector<int64_t> lengths = {caches[0].length, caches[1].length};
  auto expect_error = [&](std::vector<SequenceStep> steps, ErrorCode code) {
    auto got = model->forward_sequences(steps);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.error().code, code) << got.error().to_string();
    EXPECT_EQ(caches[0].length, lengths[0]);
    EXPECT_EQ(caches[1].length, lengths[1]);
  };
  expect_error({}, ErrorCode::kInvalidArgument);
  expect_error({{{1}, &caches[0]}, {{2}, &caches[0]}}, ErrorCode::kInvalidArgument);          // one cache twice
  expect_error({{{1}, &caches[0]}, {{}, &caches[1]}}, ErrorCode::kInvalidArgument);           // nothing to run
  expect_error({{{1}, &caches[0]}, {{model->config().n_vocab}, &caches[1]}}, ErrorCode::kInvalidArgument);
  expect_error({{{1}, &caches[0]}, {{1, 2, 3}, &caches[1]}}, ErrorCode::kContextFull);        // room for 2
}

}  // namespace
}  // namespace kvframe::runtime
