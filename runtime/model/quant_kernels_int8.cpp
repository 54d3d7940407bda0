// Decoding steps of K-quant matrices with 8-bit activations (quant_kernels.h):
// each 256 values of an activation row rounded to int8 with one fp32 scale,
// as llama.cpp's Q8_K activations are, so a weight super-block's eight (Q4_K)
// or sixteen (Q6_K) groups are multiplied and scaled in integers
// (VPMADDUBSW: unsigned weight bytes times signed activation bytes, pairs
// summed to int16; VPMADDWD by the groups' scales, to int32) and turned to
// float once per super-block. A step reads every weight once per token, so
// fewer instructions per weight is its speed; the price is the activations'
// rounding (half a step of 1/127 of each 256 values' largest).
#include "quant_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>

namespace kvframe::runtime::quant_kernels {
// A namespace of its own: a unity build compiles this file beside
// quant_kernels_kquants.cpp, whose file-local names are the same.
namespace int8_kernels {
namespace {

constexpr int64_t kSuper = 256;

#if defined(__x86_64__)
#define KV_INT8 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

// Two int16 scales, one for each 32-value half of a 64-value run.
KV_INT8 inline __m512i halves_epi16(int lo, int hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>(lo))),
                            _mm256_set1_epi16(static_cast<int16_t>(hi)), 1);
}

// Q4_K: fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
// nibbles; value = d scale_j q - dmin min_j for group j of 32.
KV_INT8 void rows_q4_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const Int8Rows& x,
                       float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 144;
  const int64_t supers = cols / kSuper;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      __m512 acc = _mm512_setzero_ps();
      float minimums = 0;
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const int64_t block = i * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        const float* group_sums = x.sum.data() + block * 8;
        const auto [scale, minimum] = q4_k_scales(b + 4);
        __m512i sums = _mm512_setzero_si512();
        for (int pair = 0; pair < 4; ++pair) {
          const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * pair));
          const __m512i weights = _mm512_inserti64x4(
              _mm512_castsi256_si512(_mm256_and_si256(packed, low4)),
              _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4), 1);
          const __m512i products = _mm512_maddubs_epi16(weights, _mm512_loadu_si512(a + 64 * pair));
          sums = _mm512_add_epi32(sums, _mm512_madd_epi16(products, halves_epi16(scale[2 * pair], scale[2 * pair + 1])));
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_set1_ps(fp16_at(b) * x.scale[static_cast<size_t>(block)]),
                              acc);
        float m = 0;
        for (int j = 0; j < 8; ++j) m += static_cast<float>(minimum[j]) * group_sums[j];
        minimums += fp16_at(b + 2) * m;
      }
      y[i * y_stride + r] = _mm512_reduce_add_ps(acc) - minimums;
    }
  }
}

// Q6_K: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16 int8 scales,
// fp16 d; value = d scale_k (q - 32) for group k of 16. The products take q
// unsigned (0..63); 32 times each group's activation sum comes off.
KV_INT8 void rows_q6_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const Int8Rows& x,
                       float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 210;
  const int64_t supers = cols / kSuper;
  // For each 64 values (runs k, k + 1 of a half), the int16 lanes' group of
  // 16: lanes 8 g .. 8 g + 7 take scale 8 half + 2 k + g.
  __m512i spread[4];
  for (int t = 0; t < 4; ++t) {
    int16_t lanes[32];
    for (int l = 0; l < 32; ++l) lanes[l] = static_cast<int16_t>(4 * t + l / 8);
    spread[t] = _mm512_loadu_si512(lanes);
  }
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      __m512 acc = _mm512_setzero_ps();
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const int64_t block = i * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
        // 16 x 16-value activation sums times the groups' scales, as int32.
        const __m128i scale_bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
        const __m512i scales32 = _mm512_cvtepi8_epi32(scale_bytes);
        const __m512i scales16 = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(scale_bytes));
        __m512i sums = _mm512_mullo_epi32(
            _mm512_mullo_epi32(scales32, _mm512_loadu_si512(x.qsum16.data() + block * 16)), _mm512_set1_epi32(-32));
        for (int half = 0; half < 2; ++half) {
          __m256i runs[4];  // ggml's q1..q4: 32 values each, 0..63
          q6_k_runs(b, half, runs);
          for (int k = 0; k < 4; k += 2) {
            // Runs k and k + 1 (64 values); each run's halves of 16 have their own scale.
            const __m512i weights = _mm512_inserti64x4(_mm512_castsi256_si512(runs[k]), runs[k + 1], 1);
            const __m512i products = _mm512_maddubs_epi16(weights, _mm512_loadu_si512(a + 128 * half + 32 * k));
            const __m512i scale16 = _mm512_permutexvar_epi16(spread[2 * half + k / 2], scales16);
            sums = _mm512_add_epi32(sums, _mm512_madd_epi16(products, scale16));
          }
        }
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums),
                              _mm512_set1_ps(fp16_at(b + 208) * x.scale[static_cast<size_t>(block)]), acc);
      }
      y[i * y_stride + r] = _mm512_reduce_add_ps(acc);
    }
  }
}

KV_INT8 void quantize_avx512(const float* x, int64_t n, int64_t cols, Int8Rows& out) {
  const int64_t blocks = n * (cols / kSuper);
  for (int64_t k = 0; k < blocks; ++k) {
    const float* v = x + k * kSuper;
    __m512 largest = _mm512_setzero_ps();
    for (int c = 0; c < kSuper; c += 16) largest = _mm512_max_ps(largest, _mm512_abs_ps(_mm512_loadu_ps(v + c)));
    const float scale = _mm512_reduce_max_ps(largest) / 127.0f;
    const __m512 inverse = _mm512_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
    int8_t* q = out.q.data() + k * kSuper;
    for (int c = 0; c < kSuper; c += 16) {
      const __m512 values = _mm512_loadu_ps(v + c);
      // Rounded to nearest, ties to even (the default MXCSR).
      const __m512i rounded = _mm512_cvtps_epi32(_mm512_mul_ps(values, inverse));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + c), _mm512_cvtsepi32_epi8(rounded));
      out.qsum16[static_cast<size_t>(k * 16 + c / 16)] = _mm512_reduce_add_epi32(rounded);
      if (c % 32 == 16) {
        out.sum[static_cast<size_t>(k * 8 + c / 32)] =
            _mm512_reduce_add_ps(_mm512_add_ps(_mm512_loadu_ps(v + c - 16), values));
      }
    }
    out.scale[static_cast<size_t>(k)] = scale;
  }
}
#endif  // __x86_64__

}  // namespace
}  // namespace int8_kernels

void quantize_rows(const float* x, int64_t n, int64_t cols, Int8Rows& out) {
  const auto blocks = static_cast<size_t>(n * (cols / int8_kernels::kSuper));
  out.n = n;
  out.q.resize(blocks * int8_kernels::kSuper);
  out.scale.resize(blocks);
  out.sum.resize(blocks * 8);
  out.qsum16.resize(blocks * 16);
#if defined(__x86_64__)
  if (cpu_has_avx512()) return int8_kernels::quantize_avx512(x, n, cols, out);
  if (cpu_has_avx2()) return int8_avx2::quantize(x, n, cols, out);
#endif
}

Int8RowsFn int8_rows(GgmlType type, bool avx512) {
#if defined(__x86_64__)
  if (!avx512) return cpu_has_avx2() ? int8_avx2::rows(type) : nullptr;
  if (!cpu_has_avx512()) return nullptr;
  switch (type) {
    case GgmlType::kQ4_K: return int8_kernels::rows_q4_k;
    case GgmlType::kQ6_K: return int8_kernels::rows_q6_k;
    default: break;
  }
#endif
  (void)type;
  (void)avx512;
  return nullptr;
}

}  // namespace kvframe::runtime::quant_kernels
