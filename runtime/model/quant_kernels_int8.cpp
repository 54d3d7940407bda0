// Decoding steps of K-quant matrices with 8-bit activations (quant_kernels.h):
// each 256 values of an activation row rounded to int8 with one fp32 scale,
// as llama.cpp's Q8_K activations are, so a weight super-block's eight (Q4_K)
// or sixteen (Q6_K) groups are multiplied and scaled in integers
// (VPMADDUBSW: unsigned weight bytes times signed activation bytes, pairs
// summed to int16; VPMADDWD by the groups' scales, to int32) and turned to
// float once per super-block. A step reads every weight once per token, so
// fewer instructions per weight is its speed; the price is the activations'
// rounding (half a step of 1/127 of each 256 values' largest). Where the CPU
// has AVX-512-VNNI, VPDPWSSD does VPMADDWD's work and the sum's in one.
// These kernels and quant_kernels_int8_avx2.cpp's sum the same integers.
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
#define KV_INT8 KV_AVX512_INT8

// One weight row (its super-blocks) against the activation rows, R at a time
// (in_row_blocks()); `spread` places each group's scale in the int16 lanes.
struct SuperBlockRow {
  const uint8_t* row;
  int64_t supers, r;
  const Int8Rows& x;
  float* y;
  int64_t y_stride;
  const __m512i (&spread)[4];
};

// Q4_K: fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of
// nibbles; value = d scale_j q - dmin min_j for group j of 32. Each 32 bytes
// of nibbles hold group 2 p (low nibbles) and 2 p + 1 (high): one 512-bit
// register, whose int16 products take their groups' scales by one byte
// shuffle of the eight (unpacked four at a time, q4_k_bytes()); the mins'
// term is kept in a vector of its own, summed once per row.
template <class Products>
struct Q4kRow : SuperBlockRow {
  template <int R>
  KV_INT8 void rows(int64_t first) const {
    constexpr int64_t kBytes = 144;
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m512 acc[R];
    __m256 minimums[R];
    for (int i = 0; i < R; ++i) {
      acc[i] = _mm512_setzero_ps();
      minimums[i] = _mm256_setzero_ps();
    }
    for (int64_t s = 0; s < supers; ++s) {
      const uint8_t* b = row + s * kBytes;
      const Q4kBytes six_bits = q4_k_bytes(b + 4);
      const __m512i scales16 = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(six_bits.scales));
      __m512i weights[4], scales[4];
      for (int p = 0; p < 4; ++p) {
        const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16 + 32 * p));
        weights[p] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(packed, low4)),
                                        _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4), 1);
        scales[p] = _mm512_shuffle_epi8(scales16, spread[p]);
      }
      const float d = fp16_at(b);
      const __m256 minimum_factors = q4_k_minimum_factors(six_bits.mins, fp16_at(b + 2));
      for (int i = 0; i < R; ++i) {
        const int64_t block = (first + i) * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        __m512i sums = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) {
          sums = Products::add_dot_words(sums, _mm512_maddubs_epi16(weights[p], _mm512_loadu_si512(a + 64 * p)),
                                         scales[p]);
        }
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_set1_ps(d * x.scale[static_cast<size_t>(block)]),
                                 acc[i]);
        minimums[i] = _mm256_fmadd_ps(minimum_factors, _mm256_loadu_ps(x.sum.data() + block * 8), minimums[i]);
      }
    }
    for (int i = 0; i < R; ++i) {
      y[(first + i) * y_stride + r] = _mm512_reduce_add_ps(acc[i]) - reduce_add_avx2(minimums[i]);
    }
  }
};

template <class Products>
KV_INT8 inline void rows_q4_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                              const Int8Rows& x, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  // For nibble run p: group 2 p's int16 scale (bytes 4 p, 4 p + 1 of the
  // eight widened to int16) into the low 256 bits, 2 p + 1's into the high.
  __m512i spread[4];
  for (int p = 0; p < 4; ++p) {
    spread[p] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>((4 * p) | ((4 * p + 1) << 8)))),
                                   _mm256_set1_epi16(static_cast<int16_t>((4 * p + 2) | ((4 * p + 3) << 8))), 1);
  }
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    in_row_blocks(x.n, Q4kRow<Products>{{row, cols / kSuper, r, x, y, y_stride, spread}});
  }
}

// Q6_K: 128 bytes of low nibbles, 64 of high 2-bit pairs, 16 int8 scales,
// fp16 d; value = d scale_k (q - 32) for group k of 16. The products take q
// unsigned (0..63); 32 times each group's activation sum comes off.
template <class Products>
struct Q6kRow : SuperBlockRow {
  template <int R>
  KV_INT8 void rows(int64_t first) const {
    constexpr int64_t kBytes = 210;
    __m512 acc[R];
    for (int i = 0; i < R; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t s = 0; s < supers; ++s) {
      const uint8_t* b = row + s * kBytes;
      const __m128i group_scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 192));
      const __m512i scales16 = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(group_scales));
      const __m512i scales32 = _mm512_cvtepi8_epi32(group_scales);
      // Values 64 t .. 64 t + 63 (runs k, k + 1 of half t / 2) and their
      // groups' scales per int16 lane.
      __m512i weights[4], scales[4];
      for (int half = 0; half < 2; ++half) {
        __m256i runs[4];  // ggml's q1..q4: 32 values each, 0..63
        q6_k_runs(b, half, runs);
        for (int k = 0; k < 4; k += 2) {
          weights[2 * half + k / 2] = _mm512_inserti64x4(_mm512_castsi256_si512(runs[k]), runs[k + 1], 1);
          scales[2 * half + k / 2] = _mm512_permutexvar_epi16(spread[2 * half + k / 2], scales16);
        }
      }
      const float d = fp16_at(b + 208);
      for (int i = 0; i < R; ++i) {
        const int64_t block = (first + i) * supers + s;
        const int8_t* a = x.q.data() + block * kSuper;
        // -32 times the groups' scales times their 16-value activation sums
        // (one multiply, then a shift).
        const __m512i offsets = _mm512_mullo_epi32(scales32, _mm512_loadu_si512(x.qsum16.data() + block * 16));
        __m512i sums = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(offsets, 5));
        for (int t = 0; t < 4; ++t) {
          const int8_t* values = a + 128 * (t / 2) + 64 * (t % 2);
          sums = Products::add_dot_words(sums, _mm512_maddubs_epi16(weights[t], _mm512_loadu_si512(values)),
                                         scales[t]);
        }
        acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_set1_ps(d * x.scale[static_cast<size_t>(block)]),
                                 acc[i]);
      }
    }
    for (int i = 0; i < R; ++i) y[(first + i) * y_stride + r] = _mm512_reduce_add_ps(acc[i]);
  }
};

template <class Products>
KV_INT8 inline void rows_q6_k(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                              const Int8Rows& x, float* y, int64_t y_stride, int64_t begin, int64_t end) {
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
    in_row_blocks(x.n, Q6kRow<Products>{{row, cols / kSuper, r, x, y, y_stride, spread}});
  }
}

// Each kernel without VNNI and with it (quant_kernels.h, Avx512Products).
#define KV_INT8_INSTANCES(kernel)                                                                                   \
  KV_INT8 void kernel##_plain(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,              \
                              const Int8Rows& x, float* y, int64_t y_stride, int64_t begin, int64_t end) {          \
    kernel<Avx512Products>(w, row_bytes, order, cols, x, y, y_stride, begin, end);                                  \
  }                                                                                                                 \
  __attribute__((flatten)) KV_AVX512_VNNI void kernel##_vnni(const uint8_t* w, int64_t row_bytes,                  \
                                                             const int32_t* order, int64_t cols, const Int8Rows& x, \
                                                             float* y, int64_t y_stride, int64_t begin, int64_t end) { \
    kernel<Avx512VnniProducts>(w, row_bytes, order, cols, x, y, y_stride, begin, end);                              \
  }
KV_INT8_INSTANCES(rows_q4_k)
KV_INT8_INSTANCES(rows_q6_k)
#undef KV_INT8_INSTANCES

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

Int8RowsFn int8_rows_avx512(GgmlType type, bool vnni) {
#if defined(__x86_64__)
  switch (type) {
    case GgmlType::kQ4_K: return vnni ? int8_kernels::rows_q4_k_vnni : int8_kernels::rows_q4_k_plain;
    case GgmlType::kQ6_K: return vnni ? int8_kernels::rows_q6_k_vnni : int8_kernels::rows_q6_k_plain;
    default: break;
  }
#endif
  (void)type;
  (void)vnni;
  return nullptr;
}

Int8RowsFn int8_rows(GgmlType type, bool avx512) {
#if defined(__x86_64__)
  if (!avx512) return cpu_has_avx2() ? int8_avx2::rows(type) : nullptr;
  return cpu_has_avx512() ? int8_rows_avx512(type, cpu_has_avx512_vnni()) : nullptr;
#else
  (void)type;
  (void)avx512;
  return nullptr;
#endif
}

}  // namespace kvframe::runtime::quant_kernels
