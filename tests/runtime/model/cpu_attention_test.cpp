// The CPU's one-pass attention (runtime/model/cpu_attention.h) against
// attention written out in fp32 on the same inputs: causal, after cached
// entries, with padding, under a sliding window, for each head size it runs.
#include "cpu_attention.h"

#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "quant_kernels.h"

namespace kvframe::runtime {
namespace {

// q [n, H, d] over keys/values [KH, L, d]: query i is entry L - n + i, sees
// the entries up to it, none that `padding` marks, and with window > 0 only
// its last `window`.
at::Tensor reference(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, const at::Tensor& padding,
                     int64_t window) {
  const int64_t n = q.size(0), H = q.size(1), d = q.size(2), G = H / keys.size(0), L = keys.size(1);
  const at::Tensor k = keys.to(at::kFloat).repeat_interleave(G, 0), v = values.to(at::kFloat).repeat_interleave(G, 0);
  at::Tensor scores = at::matmul(q.to(at::kFloat).permute({1, 0, 2}), k.transpose(1, 2)) / std::sqrt(double(d));
  const at::Tensor key = at::arange(L).view({1, L}), entry = at::arange(L - n, L).view({n, 1});
  at::Tensor hidden = key > entry;
  if (window > 0) hidden = hidden | (key <= entry - window);
  if (padding.defined()) {
    at::Tensor padded = at::zeros({L}, at::kBool);
    padded.narrow(0, 0, padding.size(0)).copy_(padding);
    hidden = hidden | padded.view({1, L});
  }
  scores.masked_fill_(hidden, -INFINITY);
  return at::matmul(at::softmax(scores, -1), v).permute({1, 0, 2}).reshape({n, H * d});
}

// Sequence by sequence: its queries over the context's entries, then its own.
at::Tensor run(const at::Tensor& q, const std::vector<AttentionSequence>& sequences, const at::Tensor& context_k,
               const at::Tensor& context_v, const at::Tensor& padding, int64_t window) {
  at::Tensor out = at::full({q.size(0), q.size(1) * q.size(2)}, NAN, q.options());
  cpu_attention(q, sequences, context_k, context_v, padding, window, out);
  return out;
}

struct Case {
  int64_t n, H, KH, d, L, window;
  bool padded;
  at::ScalarType dtype;
  int64_t S = 0;  // shared context entries before the sequence's own
};

std::string name(const Case& c) {
  return std::to_string(c.n) + " queries, " + std::to_string(c.H) + "/" + std::to_string(c.KH) + " heads of " +
         std::to_string(c.d) + ", " + std::to_string(c.S) + " + " + std::to_string(c.L) + " entries, window " +
         std::to_string(c.window) + (c.padded ? ", padded, " : ", ") + c10::toString(c.dtype);
}

TEST(CpuAttentionTest, EqualsAttentionInFp32) {
  if (!quant_kernels::cpu_has_avx512()) GTEST_SKIP() << "the CPU has no AVX-512: the explicit path runs";
  c10::InferenceMode inference;
  at::manual_seed(7);
  const Case cases[] = {
      {97, 32, 8, 64, 2100, 0, false, at::kBFloat16},  // a query's final block after cached blocks
      {97, 32, 8, 64, 2100, 0, false, at::kFloat},
      {20, 9, 3, 64, 300, 0, true, at::kFloat},        // the slack layout's gaps
      {300, 9, 3, 64, 300, 0, false, at::kFloat},      // a prefill: every query causal
      {50, 4, 1, 256, 700, 512, false, at::kFloat},    // Gemma 3's local layers
      {40, 4, 1, 256, 1500, 512, true, at::kBFloat16},
      {33, 16, 8, 128, 200, 40, true, at::kBFloat16},  // the window binds inside the block
      {6, 24, 8, 128, 90, 0, false, at::kFloat},       // fewer rows than a tile
      {12, 9, 3, 64, 20, 0, true, at::kFloat, 500},    // a branch: a padded frame, its own prefix, its tokens
      {30, 4, 1, 256, 30, 100, false, at::kBFloat16, 400},  // a block after a prefix, windowed
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(name(c));
    const auto options = at::TensorOptions(c.dtype);
    // Queries as the forward pass hands them over: a view of the rotated queries and keys.
    const at::Tensor qk = at::randn({c.n, c.H + c.KH, c.d}, options) * 1.5;
    const at::Tensor q = qk.narrow(1, 0, c.H);
    // Cache layers with room past their entries, read through narrowed views.
    const at::Tensor all_k = at::randn({c.KH, c.S + c.L + 9, c.d}, options);
    const at::Tensor all_v = at::randn({c.KH, c.S + c.L + 9, c.d}, options);
    const at::Tensor context_k = all_k.narrow(1, 0, c.S), context_v = all_v.narrow(1, 0, c.S);
    const at::Tensor own_k = all_k.narrow(1, c.S, c.L), own_v = all_v.narrow(1, c.S, c.L);
    const at::Tensor padding = c.padded ? at::rand({c.S > 0 ? c.S : c.L - c.n}) < 0.3 : at::Tensor();
    ASSERT_TRUE(cpu_attention_runs(q));
    const at::Tensor got = run(q, {{0, c.n, own_k, own_v}}, context_k, context_v, padding, c.window);
    ASSERT_EQ(got.scalar_type(), c.dtype);
    const at::Tensor want =
        reference(q, all_k.narrow(1, 0, c.S + c.L), all_v.narrow(1, 0, c.S + c.L), padding, c.window);
    const double error = (got.to(at::kFloat) - want).norm().item<double>() / want.norm().item<double>();
    // fp32 to its rounding; bf16 to its output's rounding (2^-9 relative).
    EXPECT_LT(error, c.dtype == at::kFloat ? 1e-5 : 4e-3);
  }
}

// Batched branches must answer as they do alone: each row's result depends on
// its own keys only, bit for bit, whatever shares its call or its tile (short
// sequences, as branches' decoding steps, share tiles), and whether the
// context is shared or at the start of the sequence's own cache.
TEST(CpuAttentionTest, ASequenceInABatchGetsWhatItGetsAlone) {
  if (!quant_kernels::cpu_has_avx512()) GTEST_SKIP() << "the CPU has no AVX-512: the explicit path runs";
  c10::InferenceMode inference;
  at::manual_seed(8);
  const auto options = at::TensorOptions(at::kBFloat16);
  const at::Tensor context_k = at::randn({3, 333, 64}, options), context_v = at::randn({3, 333, 64}, options);
  const int64_t lengths[] = {17, 9, 1, 1, 2}, prefixes[] = {0, 31, 5, 70, 0};
  std::vector<AttentionSequence> sequences;
  int64_t first = 0;
  for (size_t i = 0; i < std::size(lengths); ++i) {
    const int64_t own = prefixes[i] + lengths[i];
    sequences.push_back({first, lengths[i], at::randn({3, own, 64}, options), at::randn({3, own, 64}, options)});
    first += lengths[i];
  }
  const at::Tensor q = at::randn({first, 9, 64}, options);
  for (const int64_t window : {int64_t{0}, int64_t{50}}) {
    SCOPED_TRACE("window " + std::to_string(window));
    const at::Tensor batched = run(q, sequences, context_k, context_v, {}, window);
    for (const AttentionSequence& sequence : sequences) {
      const at::Tensor alone = run(q, {sequence}, context_k, context_v, {}, window);
      EXPECT_TRUE(batched.narrow(0, sequence.first, sequence.n).equal(alone.narrow(0, sequence.first, sequence.n)));
      // Rows of no sequence of the call are left alone.
      EXPECT_EQ(alone.isnan().any(1).sum().item<int64_t>(), first - sequence.n);
      // As a query's final block alone (CachePlan): the context's entries at
      // the start of its own cache, 333 of them, not a whole number of blocks.
      const AttentionSequence whole{sequence.first, sequence.n, at::cat({context_k, sequence.keys}, 1),
                                    at::cat({context_v, sequence.values}, 1)};
      const at::Tensor cached = run(q, {whole}, {}, {}, {}, window);
      EXPECT_TRUE(batched.narrow(0, sequence.first, sequence.n).equal(cached.narrow(0, sequence.first, sequence.n)));
    }
  }
}

TEST(CpuAttentionTest, LeavesOtherHeadSizesAndGradientsToTheExplicitPath) {
  EXPECT_FALSE(cpu_attention_runs(at::randn({20, 9, 48})));  // no kernel for this head size
  EXPECT_FALSE(cpu_attention_runs(at::randn({20, 9, 64}).requires_grad_()));
}

}  // namespace
}  // namespace kvframe::runtime
