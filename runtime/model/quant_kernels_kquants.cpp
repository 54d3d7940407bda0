// Q4_K and Q6_K rows multiplied in registers (AVX-512): the types most of a
// Q4_K_M file is, where the generic path (a row dequantized into a buffer,
// then multiplied) reads and writes every value twice. Each super-block's
// 32-value groups are expanded to fp32 in registers and multiplied with the
// activation rows as they are; Q4_K's per-group minimum is applied once per
// group through the activations' group sums, shared by every weight row.
#include "quant_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as quant_matrix.cpp
#endif

#include <algorithm>
#include <vector>

namespace kvframe::runtime::quant_kernels {
namespace {

constexpr int64_t kSuper = 256;  // values per K-quant super-block
constexpr int64_t kTile = 4;     // activation rows per pass over a weight row

#if defined(__x86_64__)
#define KV_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

// 16 bytes as 16 fp32 values.
KV_AVX512 inline __m512 u8_to_ps(__m128i bytes) { return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes)); }

// acc[i] += w . x[i][at .. at + 16) for the tile's rows.
KV_AVX512 inline void fma_rows(__m512 w, const float* x, int64_t cols, int64_t at, int64_t tile, __m512* acc) {
  for (int64_t i = 0; i < tile; ++i) acc[i] = _mm512_fmadd_ps(w, _mm512_loadu_ps(x + i * cols + at), acc[i]);
}

// Q4_K: fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
// nibbles; value = d * scale_j * q - dmin * min_j for group j of 32.
KV_AVX512 void rows_q4_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const float* x,
                         int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 144;
  const int64_t supers = cols / kSuper, groups = cols / 32;
  // Each activation row's sum over each 32-value group: the minimums' term.
  std::vector<float> sums(static_cast<size_t>(n * groups));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* v = x + i * cols + 32 * g;
      sums[static_cast<size_t>(i * groups + g)] =
          _mm512_reduce_add_ps(_mm512_add_ps(_mm512_loadu_ps(v), _mm512_loadu_ps(v + 16)));
    }
  }
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t tile = std::min(kTile, n - i0);
      const float* xt = x + i0 * cols;
      __m512 acc[kTile];
      float minimums[kTile] = {0, 0, 0, 0};
      for (auto& a : acc) a = _mm512_setzero_ps();
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const float d = fp16_at(b), dmin = fp16_at(b + 2);
        const auto [scale, minimum] = q4_k_scales(b + 4);
        for (int pair = 0; pair < 4; ++pair) {
          const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * pair));
          const __m256i lo = _mm256_and_si256(packed, low4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
          const __m512 s_lo = _mm512_set1_ps(d * static_cast<float>(scale[2 * pair]));
          const __m512 s_hi = _mm512_set1_ps(d * static_cast<float>(scale[2 * pair + 1]));
          const int64_t at = s * kSuper + 64 * pair;
          fma_rows(_mm512_mul_ps(u8_to_ps(_mm256_castsi256_si128(lo)), s_lo), xt, cols, at, tile, acc);
          fma_rows(_mm512_mul_ps(u8_to_ps(_mm256_extracti128_si256(lo, 1)), s_lo), xt, cols, at + 16, tile, acc);
          fma_rows(_mm512_mul_ps(u8_to_ps(_mm256_castsi256_si128(hi)), s_hi), xt, cols, at + 32, tile, acc);
          fma_rows(_mm512_mul_ps(u8_to_ps(_mm256_extracti128_si256(hi, 1)), s_hi), xt, cols, at + 48, tile, acc);
          for (int64_t i = 0; i < tile; ++i) {
            const float* group_sums = sums.data() + (i0 + i) * groups + s * 8 + 2 * pair;
            minimums[i] += dmin * (static_cast<float>(minimum[2 * pair]) * group_sums[0] +
                                   static_cast<float>(minimum[2 * pair + 1]) * group_sums[1]);
          }
        }
      }
      for (int64_t i = 0; i < tile; ++i) y[(i0 + i) * y_stride + r] = _mm512_reduce_add_ps(acc[i]) - minimums[i];
    }
  }
}

// 16 six-bit values (bytes) less 32, times their group's scale.
KV_AVX512 inline __m512 q6_values(__m128i bytes, float scale) {
  const __m512i centered = _mm512_sub_epi32(_mm512_cvtepu8_epi32(bytes), _mm512_set1_epi32(32));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(centered), _mm512_set1_ps(scale));
}

// Q6_K: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16 int8 scales,
// fp16 d; value = d * scale_k * (q - 32) for group k of 16.
KV_AVX512 void rows_q6_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const float* x,
                         int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 210;
  const int64_t supers = cols / kSuper;
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t tile = std::min(kTile, n - i0);
      const float* xt = x + i0 * cols;
      __m512 acc[kTile];
      for (auto& a : acc) a = _mm512_setzero_ps();
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
        const float d = fp16_at(b + 208);
        for (int half = 0; half < 2; ++half) {
          __m256i runs[4];
          q6_k_runs(b, half, runs);
          const int8_t* sc = scales + 8 * half;
          for (int k = 0; k < 4; ++k) {
            const int64_t at = s * kSuper + 128 * half + 32 * k;
            fma_rows(q6_values(_mm256_castsi256_si128(runs[k]), d * static_cast<float>(sc[2 * k])), xt, cols, at,
                     tile, acc);
            fma_rows(q6_values(_mm256_extracti128_si256(runs[k], 1), d * static_cast<float>(sc[2 * k + 1])), xt,
                     cols, at + 16, tile, acc);
          }
        }
      }
      for (int64_t i = 0; i < tile; ++i) y[(i0 + i) * y_stride + r] = _mm512_reduce_add_ps(acc[i]);
    }
  }
}
#define KV_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,f16c")))

// 32 fp32 values (two registers) as 32 bf16 at out, rounded to nearest even;
// a quantized value d * q is never a denormal, which the instruction flushes.
KV_AVX512_BF16 inline void store_bf16(__m512 lo, __m512 hi, uint16_t* out) {
  _mm512_storeu_si512(out, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
}

// A Q4_K row straight to bf16, for a tile (quant_matrix.cpp's multiply_tiles).
KV_AVX512_BF16 void bf16_q4_k(const uint8_t* row, int64_t cols, uint16_t* out) {
  constexpr int64_t kBytes = 144;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t s = 0; s < cols / kSuper; ++s, out += kSuper) {
    const uint8_t* b = row + s * kBytes;
    const float d = fp16_at(b), dmin = fp16_at(b + 2);
    const Q4kScales scales = q4_k_scales(b + 4);
    for (int pair = 0; pair < 4; ++pair) {
      const int j = 2 * pair;
      // d1 * q - m1 as ggml's dequantize_row_q4_K computes it: a product, then a difference.
      const __m512 d_lo = _mm512_set1_ps(d * static_cast<float>(scales.scale[j]));
      const __m512 m_lo_v = _mm512_set1_ps(dmin * static_cast<float>(scales.minimum[j]));
      const __m512 d_hi = _mm512_set1_ps(d * static_cast<float>(scales.scale[j + 1]));
      const __m512 m_hi_v = _mm512_set1_ps(dmin * static_cast<float>(scales.minimum[j + 1]));
      const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * pair));
      const __m256i lo = _mm256_and_si256(packed, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
      store_bf16(_mm512_sub_ps(_mm512_mul_ps(u8_to_ps(_mm256_castsi256_si128(lo)), d_lo), m_lo_v),
                 _mm512_sub_ps(_mm512_mul_ps(u8_to_ps(_mm256_extracti128_si256(lo, 1)), d_lo), m_lo_v), out + 64 * pair);
      store_bf16(_mm512_sub_ps(_mm512_mul_ps(u8_to_ps(_mm256_castsi256_si128(hi)), d_hi), m_hi_v),
                 _mm512_sub_ps(_mm512_mul_ps(u8_to_ps(_mm256_extracti128_si256(hi, 1)), d_hi), m_hi_v),
                 out + 64 * pair + 32);
    }
  }
}
#endif  // __x86_64__

}  // namespace

Bf16RowFn avx512_bf16_row(GgmlType type) {
#if defined(__x86_64__)
  if (cpu_has_avx512_bf16() && type == GgmlType::kQ4_K) return bf16_q4_k;
#endif
  (void)type;
  return nullptr;
}

RowsFn avx512_rows(GgmlType type) {
#if defined(__x86_64__)
  switch (type) {
    case GgmlType::kQ4_K: return rows_q4_k;
    case GgmlType::kQ6_K: return rows_q6_k;
    default: break;
  }
#endif
  (void)type;
  return nullptr;
}

}  // namespace kvframe::runtime::quant_kernels
