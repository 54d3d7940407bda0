// Fused attention on CUDA (see fused_attention.h).
#include "fused_attention.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace kvframe::runtime {

#ifdef KVFRAME_TORCH_SDPA

namespace {

// Cached entries at least this many: below, one call of the plain kernel costs less than two and a merge.
constexpr int64_t kFoldMinEntries = 1024;

// See fused_cache_attention's `fold`: 1 < n < L, KH < H.
at::Tensor folded_cache_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                  double scale) {
  const int64_t n = q.size(0), H = q.size(1), d = q.size(2), KH = keys.size(0), G = H / KH, P = keys.size(1) - n;
  // Rows (g, i) of KV head kv: query head kv G + g of token i (the head order of the forward pass).
  const at::Tensor rows = q.reshape({n, KH, G, d}).permute({1, 2, 0, 3}).reshape({1, KH, G * n, d});
  auto cached = at::_scaled_dot_product_flash_attention(rows, keys.narrow(1, 0, P).unsqueeze(0),
                                                        values.narrow(1, 0, P).unsqueeze(0), /*dropout_p=*/0.0,
                                                        /*is_causal=*/false, /*return_debug_mask=*/false, scale);
  const at::Tensor cached_out = std::get<0>(cached).view({KH, G, n, d}).permute({2, 0, 1, 3}).reshape({n, H, d});
  const at::Tensor cached_lse =
      std::get<1>(cached).narrow(-1, 0, G * n).reshape({KH, G, n}).permute({2, 0, 1}).reshape({n, H, 1});
  // The queries' own entries, causally (square: top-left is bottom-right).
  auto own = at::_scaled_dot_product_flash_attention(q.transpose(0, 1).unsqueeze(0), keys.narrow(1, P, n).unsqueeze(0),
                                                     values.narrow(1, P, n).unsqueeze(0), /*dropout_p=*/0.0,
                                                     /*is_causal=*/true, /*return_debug_mask=*/false, scale);
  const at::Tensor own_out = std::get<0>(own).squeeze(0).transpose(0, 1);                            // [n, H, d]
  const at::Tensor own_lse = std::get<1>(own).narrow(-1, 0, n).squeeze(0).t().reshape({n, H, 1});  // [n, H, 1]
  // The softmax over both: each part weighted by its share of the exponentials.
  const at::Tensor lse = at::logaddexp(cached_lse, own_lse);
  const at::Tensor out =
      cached_out.to(at::kFloat) * at::exp(cached_lse - lse) + own_out.to(at::kFloat) * at::exp(own_lse - lse);
  return out.to(q.scalar_type()).reshape({n, H * d});
}

}  // namespace

at::Tensor fused_cache_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, bool fold) {
  const int64_t n = q.size(0), H = q.size(1), d = q.size(2), L = keys.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  if (fold && n > 1 && L - n >= kFoldMinEntries && keys.size(0) < H) {
    return folded_cache_attention(q, keys, values, scale);
  }
  // [1, heads, length, d] views, as torch's attention entry points take them.
  const at::Tensor q4 = q.transpose(0, 1).unsqueeze(0), k4 = keys.unsqueeze(0), v4 = values.unsqueeze(0);
  at::Tensor out;
  if (n == 1 || n == L) {
    // Torch's public entry point: its causal mask is top-left aligned, which
    // is the bottom-right one when the queries are all the keys.
    out = at::scaled_dot_product_attention(q4, k4, v4, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/n > 1,
                                           scale, /*enable_gqa=*/true);
  } else {
    // Queries after cached entries: flash attention's own causal rule is the
    // bottom-right one (what torch's causal_lower_right bias calls too).
    out = std::get<0>(at::_scaled_dot_product_flash_attention(q4, k4, v4, /*dropout_p=*/0.0, /*is_causal=*/true,
                                                              /*return_debug_mask=*/false, scale));
  }
  return out.squeeze(0).transpose(0, 1).reshape({n, H * d});  // [1, H, n, d] -> [n, H d]
}

RaggedRows ragged_rows(const std::vector<int64_t>& q_starts, const std::vector<int64_t>& k_starts,
                       const at::Device& device) {
  RaggedRows rows;
  for (size_t r = 0; r + 1 < q_starts.size(); ++r) {
    rows.max_q = std::max(rows.max_q, q_starts[r + 1] - q_starts[r]);
    rows.max_k = std::max(rows.max_k, k_starts[r + 1] - k_starts[r]);
  }
  const auto ints = at::TensorOptions(at::kInt).device(device);
  rows.cu_q = at::tensor(std::vector<int32_t>(q_starts.begin(), q_starts.end()), at::kInt).to(ints);
  rows.cu_k = at::tensor(std::vector<int32_t>(k_starts.begin(), k_starts.end()), at::kInt).to(ints);
  return rows;
}

at::Tensor fused_rows_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                const RaggedRows& rows) {
  const int64_t T = q.size(0), H = q.size(1), d = q.size(2);
  at::Tensor out = std::get<0>(at::_flash_attention_forward(
      q.contiguous(), k.contiguous(), v.contiguous(), rows.cu_q, rows.cu_k, rows.max_q, rows.max_k,
      /*dropout_p=*/0.0, /*is_causal=*/true, /*return_debug_mask=*/false, 1.0 / std::sqrt(static_cast<double>(d))));
  return out.reshape({T, H * d});
}

at::Tensor fused_step_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                const at::Tensor& used, const at::Tensor& cu_q, const at::Tensor& cu_k) {
  const int64_t H = q.size(1), d = q.size(2), capacity = keys.size(1);
  // One sequence of one query over `capacity` keys laid out [capacity, KH, d]
  // (views: flash attention reads rows and heads by their strides), of which
  // seqused_k says how many count. Flash attention splits the keys across
  // the GPU for a single query (its decoding path).
  at::Tensor out = std::get<0>(at::_flash_attention_forward(
      q, keys.transpose(0, 1), values.transpose(0, 1), cu_q, cu_k, /*max_q=*/1, /*max_k=*/capacity,
      /*dropout_p=*/0.0, /*is_causal=*/false, /*return_debug_mask=*/false, 1.0 / std::sqrt(static_cast<double>(d)),
      /*window_size_left=*/std::nullopt, /*window_size_right=*/std::nullopt, /*seqused_k=*/used));
  return out.reshape({1, H * d});
}

namespace {

// Bottom-right causal attention in fp32, heads expanded: what the fused
// kernels must match. q [n, H, d], k, v [L, KH, d] -> [n, H d].
at::Tensor reference(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const int64_t n = q.size(0), H = q.size(1), d = q.size(2), L = k.size(0), G = H / k.size(1);
  const at::Tensor kk = k.to(at::kFloat).repeat_interleave(G, 1).permute({1, 2, 0});  // [H, d, L]
  const at::Tensor vv = v.to(at::kFloat).repeat_interleave(G, 1).permute({1, 0, 2});  // [H, L, d]
  at::Tensor scores = at::matmul(q.to(at::kFloat).permute({1, 0, 2}), kk) / std::sqrt(static_cast<double>(d));
  const auto longs = at::TensorOptions(at::kLong).device(q.device());
  const at::Tensor future = at::arange(0, L, longs).view({1, L}) > at::arange(L - n, L, longs).view({n, 1});
  scores.masked_fill_(future, -INFINITY);
  return at::matmul(at::softmax(scores, -1), vv).permute({1, 0, 2}).reshape({n, H * d});
}

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  return (got.to(at::kFloat) - want).norm().item<double>() / want.norm().item<double>();
}

// One kernel's check: empty when it agrees with the reference, else why not.
using Check = std::string;

template <typename Run>
Check checked(Run&& run) {
  try {
    return run();
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  }
}

constexpr int64_t kHeads = 8, kKvHeads = 2, kHeadDim = 64;
constexpr double kTolerance = 2e-2;  // bf16 inputs land near 4e-3

// n queries over L entries of a cache layer [KH, capacity, d], read through
// a narrowed view as callers pass it.
Check check_cache(const at::TensorOptions& options, int64_t n, int64_t L) {
  const at::Tensor q = at::randn({n, kHeads, kHeadDim}, options);
  const at::Tensor cache_k = at::randn({kKvHeads, L + 5, kHeadDim}, options);
  const at::Tensor cache_v = at::randn({kKvHeads, L + 5, kHeadDim}, options);
  const at::Tensor keys = cache_k.narrow(1, 0, L), values = cache_v.narrow(1, 0, L);
  const double err = relative_error(fused_cache_attention(q, keys, values, false),
                                    reference(q, keys.transpose(0, 1), values.transpose(0, 1)));
  if (err < kTolerance) return {};
  return std::to_string(n) + " queries over " + std::to_string(L) + " keys are off by " + std::to_string(err);
}

// 6 queries after 35 cached entries, query heads folded.
Check check_folded(const at::TensorOptions& options) {
  const at::Tensor q = at::randn({6, kHeads, kHeadDim}, options);
  const at::Tensor keys = at::randn({kKvHeads, 41, kHeadDim}, options);
  const at::Tensor values = at::randn({kKvHeads, 41, kHeadDim}, options);
  const double err = relative_error(folded_cache_attention(q, keys, values, 1.0 / std::sqrt(double{kHeadDim})),
                                    reference(q, keys.transpose(0, 1), values.transpose(0, 1)));
  if (err < kTolerance) return {};
  return "6 queries after 35 entries, heads folded, are off by " + std::to_string(err);
}

// Rows of 7, 3 and 1 queries, the middle one after 4 earlier keys.
Check check_rows(const at::TensorOptions& options) {
  const std::vector<int64_t> q_starts{0, 7, 10, 11}, k_starts{0, 7, 14, 15};
  const at::Tensor q = at::randn({11, kHeads, kHeadDim}, options);
  const at::Tensor k = at::randn({15, kKvHeads, kHeadDim}, options), v = at::randn({15, kKvHeads, kHeadDim}, options);
  const at::Tensor got = fused_rows_attention(q, k, v, ragged_rows(q_starts, k_starts, options.device()));
  for (size_t r = 0; r + 1 < q_starts.size(); ++r) {
    const int64_t q0 = q_starts[r], n = q_starts[r + 1] - q0, k0 = k_starts[r], L = k_starts[r + 1] - k0;
    const double err =
        relative_error(got.narrow(0, q0, n), reference(q.narrow(0, q0, n), k.narrow(0, k0, L), v.narrow(0, k0, L)));
    if (!(err < kTolerance)) return "row " + std::to_string(r) + " is off by " + std::to_string(err);
  }
  return {};
}

// One query over the first 29 of 48 entries; the others hold NaN, which
// must never be read.
Check check_step(const at::TensorOptions& options) {
  constexpr int64_t capacity = 48, used = 29;
  const auto ints = at::TensorOptions(at::kInt).device(options.device());
  const at::Tensor q = at::randn({1, kHeads, kHeadDim}, options);
  at::Tensor k = at::full({kKvHeads, capacity, kHeadDim}, NAN, options);
  at::Tensor v = at::full({kKvHeads, capacity, kHeadDim}, NAN, options);
  k.narrow(1, 0, used).normal_();
  v.narrow(1, 0, used).normal_();
  const at::Tensor got = fused_step_attention(q, k, v, at::full({1}, used, ints), at::tensor({0, 1}, ints),
                                              at::tensor({0, static_cast<int32_t>(capacity)}, ints));
  const double err = relative_error(got, reference(q, k.narrow(1, 0, used).transpose(0, 1),
                                                   v.narrow(1, 0, used).transpose(0, 1)));
  if (err < kTolerance) return {};
  return "one query over " + std::to_string(used) + " of " + std::to_string(capacity) + " entries is off by " +
         std::to_string(err);
}

FusedSupport check_all(const at::Device& device, at::ScalarType dtype) {
  c10::InferenceMode inference;
  const auto options = at::TensorOptions(dtype).device(device);
  const Check cache = checked([&] {
    Check step = check_cache(options, 1, 37);
    return step.empty() ? check_cache(options, 9, 9) : step;
  });
  const Check after = checked([&] { return check_cache(options, 6, 41); });
  const Check folded = checked([&] { return check_folded(options); });
  const Check rows = checked([&] { return check_rows(options); });
  const Check step = checked([&] { return check_step(options); });
  auto line = [](const char* what, const Check& c) {
    return std::string(what) + (c.empty() ? " on" : " off (" + c + ")");
  };
  std::fprintf(stderr, "kvframe: fused attention on %s %s: %s, %s, %s, %s, %s\n", device.str().c_str(),
               c10::toString(dtype), line("cache", cache).c_str(), line("cache-after", after).c_str(),
               line("folded", folded).c_str(), line("rows", rows).c_str(), line("step", step).c_str());
  return {cache.empty(), after.empty(), after.empty() && folded.empty(), rows.empty(), step.empty()};
}

}  // namespace

FusedSupport fused_support(const at::Device& device, at::ScalarType dtype) {
  if (!device.is_cuda() || (dtype != at::kBFloat16 && dtype != at::kHalf)) return {};
  static std::mutex mutex;
  static std::map<std::pair<int, at::ScalarType>, FusedSupport> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(static_cast<int>(device.has_index() ? device.index() : 0), dtype);
  if (auto it = known.find(key); it != known.end()) return it->second;
  return known.emplace(key, check_all(device, dtype)).first->second;
}

#else  // libtorch before 2.5: the explicit path everywhere

FusedSupport fused_support(const at::Device&, at::ScalarType) { return {}; }

at::Tensor fused_cache_attention(const at::Tensor&, const at::Tensor&, const at::Tensor&, bool) {
  TORCH_CHECK(false, "fused attention needs libtorch >= 2.5");
}

RaggedRows ragged_rows(const std::vector<int64_t>&, const std::vector<int64_t>&, const at::Device&) {
  TORCH_CHECK(false, "fused attention needs libtorch >= 2.5");
}

at::Tensor fused_rows_attention(const at::Tensor&, const at::Tensor&, const at::Tensor&, const RaggedRows&) {
  TORCH_CHECK(false, "fused attention needs libtorch >= 2.5");
}

at::Tensor fused_step_attention(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                const at::Tensor&, const at::Tensor&) {
  TORCH_CHECK(false, "fused attention needs libtorch >= 2.5");
}

#endif

}  // namespace kvframe::runtime
