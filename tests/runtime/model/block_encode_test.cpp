// Block attention on tiny random-weight models: Model::encode_blocks and
// forward() over padded caches, each checked against plain forward() passes
// over the same tokens in a compact cache.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <random>
#include <vector>

#include "kvframe/runtime/model.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TinyModelSpec;

// fp32 on the CPU: a batched pass and a single one differ only in summation
// order (values and logits here are of magnitude ~0.1-10).
constexpr double kRtol = 1e-5, kAtol = 1e-5;

using test::random_tokens;
std::unique_ptr<Model> tiny_model(const TinyModelSpec& spec) { return test::load_tiny_model(spec); }
std::vector<std::vector<int32_t>> random_blocks(const std::vector<int64_t>& lengths, uint32_t seed) {
  return test::random_rows(lengths, seed);
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

KvCache forward_cache(const Model& model, const std::vector<int32_t>& tokens, int64_t capacity) {
  KvCache cache = *model.new_cache(capacity);
  auto logits = model.forward(test::token_ids(tokens), cache);
  EXPECT_TRUE(logits.ok()) << logits.error().to_string();
  return cache;
}

Result<std::vector<BlockKv>> encode(const Model& model, const std::vector<std::vector<int32_t>>& blocks,
                                    const KvCache* context = nullptr) {
  auto kv = model.encode_blocks(blocks, context);
  EXPECT_TRUE(kv.ok()) << kv.error().to_string();
  return kv;
}

// `block`, encoded at positions `position` .. + n - 1, holds what `cache` holds
// at entries `entry` .. + n - 1: the same values, and the same keys once rotated.
void expect_block_matches_cache(const Model& model, const BlockKv& block, const KvCache& cache, int64_t entry,
                                int64_t position) {
  const ModelConfig& c = model.config();
  const int64_t n = block.tokens();
  ASSERT_EQ(block.k.sizes(), (std::vector<int64_t>{c.n_layer, c.n_head_kv, n, c.head_dim}));
  ASSERT_EQ(block.v.sizes(), block.k.sizes());
  EXPECT_TRUE(block.k.is_contiguous() && block.v.is_contiguous());
  EXPECT_EQ(block.k.scalar_type(), model.dtype());
  const at::Tensor delta = at::arange(position, position + n, at::kLong);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const at::Tensor k = model.rope().rotate(block.k[l].transpose(0, 1), delta, l).transpose(0, 1);
    const at::Tensor cached_k = cache.k[l].narrow(1, entry, n), cached_v = cache.v[l].narrow(1, entry, n);
    EXPECT_TRUE(at::allclose(k, cached_k, kRtol, kAtol)) << "layer " << l << " keys differ by up to "
                                                         << (k - cached_k).abs().max().item<double>();
    EXPECT_TRUE(at::allclose(block.v[l], cached_v, kRtol, kAtol))
        << "layer " << l << " values differ by up to " << (block.v[l] - cached_v).abs().max().item<double>();
  }
}

void expect_same_kv(const BlockKv& a, const BlockKv& b, const std::string& what) {
  ASSERT_EQ(a.k.sizes(), b.k.sizes()) << what;
  EXPECT_TRUE(at::allclose(a.k, b.k, kRtol, kAtol))
      << what << ": keys differ by " << (a.k - b.k).abs().max().item<double>();
  EXPECT_TRUE(at::allclose(a.v, b.v, kRtol, kAtol))
      << what << ": values differ by " << (a.v - b.v).abs().max().item<double>();
}

// `compact`'s entries re-laid out as kv_diff may assemble them: its two halves
// swapped, with masked garbage entries before, between and after them, and
// stale padding flags beyond the end (forward() clears the entries it writes).
KvCache scrambled_copy(const Model& model, const KvCache& compact, int64_t capacity) {
  const int64_t n = compact.length, first = n / 2, second = n - first;
  KvCache out = *model.new_cache(capacity);
  out.padding = at::zeros({capacity}, at::kBool);
  const int64_t second_at = 1, first_at = second_at + second + 2;
  for (size_t l = 0; l < out.k.size(); ++l) {
    for (auto [to, from] : {std::pair{&out.k[l], &compact.k[l]}, std::pair{&out.v[l], &compact.v[l]}}) {
      to->copy_(at::randn(to->sizes()) * 10);
      to->narrow(1, second_at, second).copy_(from->narrow(1, first, second));
      to->narrow(1, first_at, first).copy_(from->narrow(1, 0, first));
    }
  }
  for (int64_t garbage : {int64_t{0}, second_at + second, second_at + second + 1, first_at + first}) {
    out.padding[garbage] = true;
  }
  out.length = first_at + first + 1;
  out.padding.narrow(0, out.length, capacity - out.length).fill_(true);
  out.next_position = compact.next_position;
  return out;
}

// tiny_shapes(), the windowed one (the encoder windows local layers as
// forward() does) and Phi-3's (partial rotary, LongRoPE's attention factor).
std::vector<TinyModelSpec> block_shapes() {
  std::vector<TinyModelSpec> shapes = test::tiny_shapes();
  shapes.push_back(test::windowed_shape());
  shapes.push_back(test::phi3_shape());
  return shapes;
}

TEST(BlockEncode, OneBlockWithoutContextMatchesForward) {
  for (const TinyModelSpec& spec : block_shapes()) {
    SCOPED_TRACE(spec.arch + " kv heads " + std::to_string(spec.n_head_kv));
    auto model = tiny_model(spec);
    const std::vector<int32_t> block = random_tokens(23, 1);
    auto kv = encode(*model, {block});
    ASSERT_TRUE(kv.ok());
    ASSERT_EQ(kv->size(), 1u);
    expect_block_matches_cache(*model, (*kv)[0], forward_cache(*model, block, 32), 0, 0);
  }
}

TEST(BlockEncode, BlockAfterContextMatchesForwardOfPrefixPlusBlock) {
  for (const TinyModelSpec& spec : block_shapes()) {
    SCOPED_TRACE(spec.arch + " kv heads " + std::to_string(spec.n_head_kv));
    auto model = tiny_model(spec);
    const std::vector<int32_t> prefix = random_tokens(12, 2), block = random_tokens(9, 3);
    const KvCache context = forward_cache(*model, prefix, 16);
    auto kv = encode(*model, {block}, &context);
    ASSERT_TRUE(kv.ok());
    expect_block_matches_cache(*model, (*kv)[0], forward_cache(*model, concat(prefix, block), 32), 12, 12);
  }
}

TEST(BlockEncode, BlocksOfMixedLengthsBatchedEqualEachAlone) {
  const std::vector<int64_t> lengths = {1, 3, 17, 40, 100, 2, 5, 64, 1, 33, 17};
  for (const TinyModelSpec& spec : block_shapes()) {
    SCOPED_TRACE(spec.arch + " kv heads " + std::to_string(spec.n_head_kv));
    auto model = tiny_model(spec);
    const std::vector<int32_t> prefix = random_tokens(12, 4);
    const KvCache context = forward_cache(*model, prefix, 16);
    const std::vector<std::vector<int32_t>> blocks = random_blocks(lengths, 10);
    auto batched = encode(*model, blocks, &context);
    ASSERT_TRUE(batched.ok());
    ASSERT_EQ(batched->size(), blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) {
      auto alone = encode(*model, {blocks[b]}, &context);
      ASSERT_TRUE(alone.ok());
      expect_same_kv((*batched)[b], (*alone)[0], "block " + std::to_string(b));
      const KvCache whole = forward_cache(*model, concat(prefix, blocks[b]), 128);
      expect_block_matches_cache(*model, (*batched)[b], whole, 12, 12);
    }
  }
}

TEST(BlockEncode, PaddedContextWithItsOwnNextPositionEqualsCompactOne) {
  at::manual_seed(7);
  auto model = tiny_model({});
  const std::vector<int32_t> prefix = random_tokens(11, 5);
  const KvCache compact = forward_cache(*model, prefix, 16);
  const KvCache padded = scrambled_copy(*model, compact, 24);
  ASSERT_NE(padded.length, padded.next_position);
  const std::vector<std::vector<int32_t>> blocks = {random_tokens(6, 6), random_tokens(30, 7), random_tokens(1, 8)};
  auto expected = encode(*model, blocks, &compact), got = encode(*model, blocks, &padded);
  ASSERT_TRUE(expected.ok() && got.ok());
  for (size_t b = 0; b < blocks.size(); ++b) expect_same_kv((*got)[b], (*expected)[b], "block " + std::to_string(b));
}

// Large enough that the attention score budget splits a group of equal blocks
// and runs the longest block in chunks of query rows.
TEST(BlockEncode, LongBlocksRunInBoundedAttentionCalls) {
  auto model = tiny_model({});
  const std::vector<int64_t> lengths = {2400, 4097, 2400, 7, 2400};
  const std::vector<std::vector<int32_t>> blocks = random_blocks(lengths, 20);
  auto batched = encode(*model, blocks);
  ASSERT_TRUE(batched.ok());
  expect_block_matches_cache(*model, (*batched)[1], forward_cache(*model, blocks[1], 4097), 0, 0);
  for (size_t b : {0, 3, 4}) {
    auto alone = encode(*model, {blocks[b]});
    ASSERT_TRUE(alone.ok());
    expect_same_kv((*batched)[b], (*alone)[0], "block " + std::to_string(b));
  }
}

TEST(BlockEncode, Bf16FollowsFp32WithinBf16Precision) {
  const std::vector<uint8_t> bytes = test::tiny_model_bytes({});
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok());
  ModelParams params;
  params.dtype = "bf16";
  auto bf16 = Model::load(*file, params);
  ASSERT_TRUE(bf16.ok()) << bf16.error().to_string();
  auto fp32 = tiny_model({});
  const std::vector<std::vector<int32_t>> blocks = random_blocks({4, 19, 1}, 40);
  const KvCache context32 = forward_cache(*fp32, random_tokens(8, 41), 8);
  const KvCache context16 = forward_cache(**bf16, random_tokens(8, 41), 8);
  auto a = encode(*fp32, blocks, &context32), b = encode(**bf16, blocks, &context16);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ((*b)[i].k.scalar_type(), at::kBFloat16);
    // bf16 keeps 8 significant bits: ~0.4% per rounding, over 2 layers.
    for (const auto& [x, y] : {std::pair{(*a)[i].k, (*b)[i].k}, std::pair{(*a)[i].v, (*b)[i].v}}) {
      const double worst = (x - y.to(at::kFloat)).abs().max().item<double>(), scale = x.abs().max().item<double>();
      EXPECT_LT(worst, 0.05 * scale) << "block " << i << ": " << worst << " vs values up to " << scale;
    }
  }
}

TEST(BlockEncode, EmptyBlocksAndBadIdsAreNamedErrors) {
  auto model = tiny_model({});
  auto none = model->encode_blocks({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  auto empty = model->encode_blocks({{1, 2}, {}});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(empty.error().message.find("block 1"), std::string::npos) << empty.error().message;

  auto bad_id = model->encode_blocks({{1}, {2}, {3, static_cast<int32_t>(test::kTinyVocab)}});
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_id.error().message.find("block 2"), std::string::npos) << bad_id.error().message;

  KvCache context = forward_cache(*model, {1, 2, 3}, 8);
  context.padding = at::zeros({8}, at::kFloat);
  auto bad_padding = model->encode_blocks({{1}}, &context);
  ASSERT_FALSE(bad_padding.ok());
  EXPECT_EQ(bad_padding.error().code, ErrorCode::kInvalidArgument);
}

// Further tokens over a padded, reordered cache whose positions run apart from
// its entries give the logits they give over the compact cache — in one step,
// a token at a time, and in a prefill long enough to run in query chunks.
TEST(PaddedCache, ForwardSkipsPaddingAndFollowsNextPosition) {
  at::manual_seed(3);
  for (const TinyModelSpec& spec : test::tiny_shapes()) {
    SCOPED_TRACE(spec.arch + " kv heads " + std::to_string(spec.n_head_kv));
    auto model = tiny_model(spec);
    const std::vector<int32_t> prefix = random_tokens(10, 30);
    for (int64_t n : {5, 600}) {
      KvCache compact = forward_cache(*model, prefix, 700);
      KvCache padded = scrambled_copy(*model, compact, 720);
      const int64_t length = padded.length;
      const std::vector<int32_t> more = random_tokens(n, 31);
      const at::Tensor expected = *model->forward(test::token_ids(more), compact, true);
      auto got = model->forward(test::token_ids(more), padded, true);
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      EXPECT_TRUE(at::allclose(*got, expected, kRtol, kAtol)) << n << " tokens: logits differ by "
                                                               << (*got - expected).abs().max().item<double>();
      EXPECT_EQ(padded.length, length + n);
      EXPECT_EQ(padded.next_position, compact.next_position);
      EXPECT_FALSE(padded.padding.narrow(0, length, n).any().item<bool>());

      const at::Tensor step_expected = *model->forward(test::token_ids({42}), compact);
      auto step = model->forward(test::token_ids({42}), padded);
      ASSERT_TRUE(step.ok());
      EXPECT_TRUE(at::allclose(*step, step_expected, kRtol, kAtol));
    }
  }
}

TEST(PaddedCache, BadPaddingIsInvalidArgumentAndLeavesTheCache) {
  auto model = tiny_model({});
  KvCache cache = forward_cache(*model, {1, 2, 3}, 8);
  for (const at::Tensor& bad : {at::zeros({8}, at::kFloat), at::zeros({7}, at::kBool), at::zeros({2, 4}, at::kBool)}) {
    cache.padding = bad;
    auto logits = model->forward(test::token_ids({4}), cache);
    ASSERT_FALSE(logits.ok());
    EXPECT_EQ(logits.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(logits.error().message.find("padding"), std::string::npos) << logits.error().message;
    EXPECT_EQ(cache.length, 3);
    EXPECT_EQ(cache.next_position, 3);
  }
}

}  // namespace
}  // namespace kvframe::runtime
