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

KV_INT8_AVX2 inline int32_t reduce_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// Q4_K (layout in quant_kernels_int8.cpp): each 32 bytes of nibbles hold
// group 2 p (low nibbles) and group 2 p + 1 (high), 32 values each. The
// groups' scales are spread to int16 lanes by a byte shuffle, and the mins'
// term (mins times the activations' group sums) is kept in a vector of its
// own, summed once per row (both unpacked as the AVX-512 kernel does).
KV_INT8_AVX2 void rows_q4_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const Int8Rows& x,
                            float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 144;
  const int64_t supers = cols / kSuper;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  // Group g's int16 scale into every int16 lane: bytes 2 g, 2 g + 1.
  __m256i spread[8];
  for (int g = 0; g < 8; ++g) spread[g] = _mm256_set1_epi16(static_cast<int16_t>((2 * g) | ((2 * g + 1) << 8)));
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      __m256 acc = _mm256_setzero_ps(), minimums = _mm256_setzero_ps();
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const int64_t block = i * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        const Q4kBytes six_bits = q4_k_bytes(b + 4);
        const __m256i scales16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(six_bits.scales));
        __m256i sums = _mm256_setzero_si256();
        for (int pair = 0; pair < 4; ++pair) {
          const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * pair));
          const __m256i lo = _mm256_and_si256(packed, low4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4);
          const __m256i p_lo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * pair)));
          const __m256i p_hi =
              _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * pair + 32)));
          sums = _mm256_add_epi32(sums, _mm256_madd_epi16(p_lo, _mm256_shuffle_epi8(scales16, spread[2 * pair])));
          sums = _mm256_add_epi32(sums, _mm256_madd_epi16(p_hi, _mm256_shuffle_epi8(scales16, spread[2 * pair + 1])));
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums), _mm256_set1_ps(fp16_at(b) * x.scale[static_cast<size_t>(block)]),
                              acc);
        minimums = q4_k_minimums(six_bits.mins, fp16_at(b + 2), x.sum.data() + block * 8, minimums);
      }
      y[i * y_stride + r] = reduce_add_avx2(acc) - reduce_add_avx2(minimums);
    }
  }
}

// Q6_K (layout in quant_kernels_int8.cpp): a run of 32 values is two groups
// of 16, each with its own scale: the low 128 bits of the products take one,
// the high 128 bits the other, spread there from the sixteen scales by a
// dword permute and a byte shuffle.
KV_INT8_AVX2 void rows_q6_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const Int8Rows& x,
                            float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kBytes = 210;
  const int64_t supers = cols / kSuper;
  // Groups 2 j and 2 j + 1 are int16 lanes 2 j, 2 j + 1: dword j, which the
  // permute puts everywhere; the shuffle then takes its low int16 in the low
  // 128 bits and its high int16 in the high ones.
  const __m256i halves = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
                                          2, 3, 2, 3, 2, 3);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      __m256 acc = _mm256_setzero_ps();
      for (int64_t s = 0; s < supers; ++s) {
        const uint8_t* b = row + s * kBytes;
        const int64_t block = i * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        const auto* scales = reinterpret_cast<const int8_t*>(b + 192);
        const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
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
          for (int k = 0; k < 4; ++k) {
            const __m256i products =
                _mm256_maddubs_epi16(runs[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 128 * half + 32 * k)));
            const __m256i pair = _mm256_permutevar8x32_epi32(scales16, _mm256_set1_epi32(4 * half + k));
            sums = _mm256_add_epi32(sums, _mm256_madd_epi16(products, _mm256_shuffle_epi8(pair, halves)));
          }
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums),
                              _mm256_set1_ps(fp16_at(b + 208) * x.scale[static_cast<size_t>(block)]), acc);
      }
      y[i * y_stride + r] = reduce_add_avx2(acc);
    }
  }
}
#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)
// The same integers as the AVX-512 rounding.
KV_INT8_AVX2 void quantize(const float* x, int64_t n, int64_t cols, Int8Rows& out) {
  const int64_t blocks = n * (cols / kSuper);
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  for (int64_t k = 0; k < blocks; ++k) {
    const float* v = x + k * kSuper;
    __m256 largest = _mm256_setzero_ps();
    for (int c = 0; c < kSuper; c += 8) largest = _mm256_max_ps(largest, _mm256_andnot_ps(sign_bit, _mm256_loadu_ps(v + c)));
    const float scale = int8_step_avx2(largest);
    const __m256 inverse = _mm256_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
    for (int c = 0; c < kSuper; c += 32) {
      __m256 values[4];
      for (int j = 0; j < 4; ++j) values[j] = _mm256_loadu_ps(v + c + 8 * j);
      __m256i rounded[4];
      round_to_int8_avx2(values, inverse, out.q.data() + k * kSuper + c, rounded);
      out.qsum16[static_cast<size_t>(k * 16 + c / 16)] = reduce_epi32(_mm256_add_epi32(rounded[0], rounded[1]));
      out.qsum16[static_cast<size_t>(k * 16 + c / 16 + 1)] = reduce_epi32(_mm256_add_epi32(rounded[2], rounded[3]));
      out.sum[static_cast<size_t>(k * 8 + c / 32)] = reduce_add_avx2(
          _mm256_add_ps(_mm256_add_ps(values[0], values[1]), _mm256_add_ps(values[2], values[3])));
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
