// quant_kernels_int8.cpp's kernels for CPUs with AVX2 but no AVX-512 (AMD
// Zen 2/3, Intel client cores): the same 8-bit activations, rounded to the
// same integers, and the same integer sums per super-block, in 256-bit
// registers. On such a CPU fp32 activations cost about three times the
// instructions per weight (each value widened to fp32 and multiplied), which
// is what a decoding step is short of.
#include "quant_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvframe::runtime::quant_kernels {
namespace int8_avx2 {
namespace {

constexpr int64_t kSuper = 256;

#if defined(__x86_64__)
#define KV_INT8_AVX2 __attribute__((target("avx2,fma,f16c")))

KV_INT8_AVX2 inline float reduce_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

KV_INT8_AVX2 inline int32_t reduce_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// Q4_K (layout in quant_kernels_int8.cpp): each 32 bytes of nibbles hold
// group 2 p (low nibbles) and group 2 p + 1 (high), 32 values each.
KV_INT8_AVX2 void rows_q4_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const Int8Rows& x,
                            float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 144;
  const int64_t supers = cols / kSuper;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      __m256 acc = _mm256_setzero_ps();
      float minimums = 0;
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const int64_t block = i * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        const float* group_sums = x.sum.data() + block * 8;
        const auto [scale, minimum] = q4_k_scales(b + 4);
        __m256i sums = _mm256_setzero_si256();
        for (int pair = 0; pair < 4; ++pair) {
          const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * pair));
          const __m256i lo = _mm256_and_si256(packed, low4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
          const __m256i p_lo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * pair)));
          const __m256i p_hi =
              _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * pair + 32)));
          sums = _mm256_add_epi32(sums, _mm256_madd_epi16(p_lo, _mm256_set1_epi16(static_cast<int16_t>(scale[2 * pair]))));
          sums = _mm256_add_epi32(sums,
                                  _mm256_madd_epi16(p_hi, _mm256_set1_epi16(static_cast<int16_t>(scale[2 * pair + 1]))));
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(fp16_at(b) * x.scale[static_cast<size_t>(block)]),
                              acc);
        float m = 0;
        for (int j = 0; j < 8; ++j) m += static_cast<float>(minimum[j]) * group_sums[j];
        minimums += fp16_at(b + 2) * m;
      }
      y[i * y_stride + r] = reduce_ps(acc) - minimums;
    }
  }
}

// Q6_K (layout in quant_kernels_int8.cpp): a run of 32 values is two groups
// of 16, each with its own scale: the low 128 bits of the products take one,
// the high 128 bits the other.
KV_INT8_AVX2 void rows_q6_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const Int8Rows& x,
                            float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 210;
  const int64_t supers = cols / kSuper;
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const int64_t block = i * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
        // -32 times each group's scale times its activations' sum.
        const int32_t* qsum = x.qsum16.data() + block * 16;
        const __m256i offsets = _mm256_add_epi32(
            _mm256_mullo_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales))),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qsum))),
            _mm256_mullo_epi32(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8))),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qsum + 8))));
        __m256i sums = _mm256_mullo_epi32(offsets, _mm256_set1_epi32(-32));
        for (int half = 0; half < 2; ++half) {
          __m256i runs[4];
          q6_k_runs(b, half, runs);
          const int8_t* sc = scales + 8 * half;
          for (int k = 0; k < 4; ++k) {
            const __m256i products =
                _mm256_maddubs_epi16(runs[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 128 * half + 32 * k)));
            const __m256i scale16 = _mm256_set_m128i(_mm_set1_epi16(sc[2 * k + 1]), _mm_set1_epi16(sc[2 * k]));
            sums = _mm256_add_epi32(sums, _mm256_madd_epi16(products, scale16));
          }
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums),
                              _mm256_set1_ps(fp16_at(b + 208) * x.scale[static_cast<size_t>(block)]), acc);
      }
      y[i * y_stride + r] = reduce_ps(acc);
    }
  }
}
#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)
// The same integers as the AVX-512 rounding (nearest, ties to even; never
// past 127, so the saturating packs do not change them).
KV_INT8_AVX2 void quantize(const float* x, int64_t n, int64_t cols, Int8Rows& out) {
  const int64_t blocks = n * (cols / kSuper);
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  // packs interleaves the 128-bit lanes; this puts the 32 bytes back in order.
  const __m256i unshuffle = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t k = 0; k < blocks; ++k) {
    const float* v = x + k * kSuper;
    __m256 largest = _mm256_setzero_ps();
    for (int c = 0; c < kSuper; c += 8) largest = _mm256_max_ps(largest, _mm256_andnot_ps(sign_bit, _mm256_loadu_ps(v + c)));
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float scale = _mm_cvtss_f32(m) / 127.0f;
    const __m256 inverse = _mm256_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
    int8_t* q = out.q.data() + k * kSuper;
    for (int c = 0; c < kSuper; c += 32) {
      __m256i rounded[4];
      __m256 sum = _mm256_setzero_ps();
      for (int j = 0; j < 4; ++j) {
        const __m256 values = _mm256_loadu_ps(v + c + 8 * j);
        sum = _mm256_add_ps(sum, values);
        rounded[j] = _mm256_cvtps_epi32(_mm256_mul_ps(values, inverse));
      }
      out.qsum16[static_cast<size_t>(k * 16 + c / 16)] = reduce_epi32(_mm256_add_epi32(rounded[0], rounded[1]));
      out.qsum16[static_cast<size_t>(k * 16 + c / 16 + 1)] = reduce_epi32(_mm256_add_epi32(rounded[2], rounded[3]));
      out.sum[static_cast<size_t>(k * 8 + c / 32)] = reduce_ps(sum);
      const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(rounded[0], rounded[1]),
                                               _mm256_packs_epi32(rounded[2], rounded[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + c), _mm256_permutevar8x32_epi32(bytes, unshuffle));
    }
    out.scale[static_cast<size_t>(k)] = scale;
  }
}
#endif

Int8RowsFn rows(GgmlType type) {
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

}  // namespace int8_avx2
}  // namespace kvframe::runtime::quant_kernels
