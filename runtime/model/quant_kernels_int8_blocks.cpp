// Decoding steps of 32-value block matrices (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)
// with 8-bit activations, in AVX2 (quant_kernels.h): each 32 values of an
// activation row rounded to int8 with a scale of their own, as llama.cpp's
// Q8_0/Q8_1 activations are, so a weight block's 32 products are summed in
// integers (VPMADDUBSW, then VPMADDWD) and turned to float once. Where the
// fp32 path widens every weight to fp32 before its multiply, this one
// multiplies bytes: the instructions per weight are what an AVX2 CPU's
// decoding step is short of, the memory it reads being the same.
#include "quant_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvframe::runtime::quant_kernels {
namespace int8_blocks {
namespace {

constexpr int64_t kQK = 32;

#if defined(__x86_64__)
#define KV_BLOCKS_AVX2 __attribute__((target("avx2,fma,f16c")))

// 16 bytes of nibbles as 32 bytes 0..15: low nibbles first (elements 0..15).
KV_BLOCKS_AVX2 inline __m256i nibbles(const uint8_t* p) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i low4 = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), low4), _mm_and_si128(q, low4));
}

// Q5's fifth bits (4 bytes, bit j for element j) as 0x10 in byte j.
KV_BLOCKS_AVX2 inline __m256i fifth_bits(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, sizeof bits);
  // Byte j takes byte j / 8 of the bits, then keeps its own bit, j % 8.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi64x(0x0000000000000000, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ULL));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// The 32 values' integer dot product as 8 int32 lanes: unsigned weights
// times signed activations; signed weights go through their magnitude, the
// activations taking their signs.
KV_BLOCKS_AVX2 inline __m256i dot_unsigned(__m256i w, __m256i a) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1));
}
KV_BLOCKS_AVX2 inline __m256i dot_signed(__m256i w, __m256i a) {
  return dot_unsigned(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

// One block: its weights as bytes (signed or not), d, and for Q4_1 and
// Q5_1 the offset m (value = d q + m) taken through the activations' sum.
struct Block {
  __m256i q;
  float d, m;
};

template <GgmlType T>
KV_BLOCKS_AVX2 inline Block block_of(const uint8_t* b) {
  constexpr BlockLayout kLayout = block_layout(T);
  if constexpr (T == GgmlType::kQ8_0) {
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + kLayout.quants)), fp16_at(b), 0};
  } else {
    __m256i q = nibbles(b + kLayout.quants);
    if constexpr (kLayout.fifth_bits >= 0) q = _mm256_or_si256(q, fifth_bits(b + kLayout.fifth_bits));
    if constexpr (kLayout.offset != 0) q = _mm256_sub_epi8(q, _mm256_set1_epi8(kLayout.offset));
    return {q, fp16_at(b), kLayout.minimum >= 0 ? fp16_at(b + kLayout.minimum) : 0};
  }
}

template <GgmlType T>
constexpr bool kUnsigned = block_layout(T).minimum >= 0;

template <GgmlType T>
KV_BLOCKS_AVX2 void rows_of(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                            const Int8Blocks& x, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  const int64_t blocks = cols / kQK, bytes = ggml_type_size(T).block_bytes;
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    for (int64_t i = 0; i < x.n; ++i) {
      // Two accumulators: two independent FMA chains.
      __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
      float offsets = 0;
      const int8_t* a = x.q.data() + i * cols;
      const float* scale = x.scale.data() + i * blocks;
      for (int64_t k = 0; k < blocks; ++k) {
        const Block b = block_of<T>(row + k * bytes);
        const __m256i activations = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + k * kQK));
        const __m256i dot = kUnsigned<T> ? dot_unsigned(b.q, activations) : dot_signed(b.q, activations);
        acc[k & 1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(b.d * scale[k]), acc[k & 1]);
        if constexpr (kUnsigned<T>) offsets += b.m * x.sum[static_cast<size_t>(i * blocks + k)];
      }
      y[i * y_stride + r] = reduce_add_avx2(_mm256_add_ps(acc[0], acc[1])) + offsets;
    }
  }
}
#endif  // __x86_64__

}  // namespace

#if defined(__x86_64__)
// Rounded as the 256-value rows are (quant_kernels_int8_avx2.cpp), per 32.
KV_BLOCKS_AVX2 void quantize(const float* x, int64_t n, int64_t cols, Int8Blocks& out) {
  const int64_t blocks = n * (cols / kQK);
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  out.n = n;
  out.q.resize(static_cast<size_t>(blocks * kQK));
  out.scale.resize(static_cast<size_t>(blocks));
  out.sum.resize(static_cast<size_t>(blocks));
  for (int64_t k = 0; k < blocks; ++k) {
    const float* v = x + k * kQK;
    __m256 values[4], largest = _mm256_setzero_ps(), sum = _mm256_setzero_ps();
    for (int j = 0; j < 4; ++j) {
      values[j] = _mm256_loadu_ps(v + 8 * j);
      largest = _mm256_max_ps(largest, _mm256_andnot_ps(sign_bit, values[j]));
      sum = _mm256_add_ps(sum, values[j]);
    }
    const float scale = int8_step_avx2(largest);
    const __m256 inverse = _mm256_set1_ps(scale > 0 ? 1.0f / scale : 0.0f);
    __m256i rounded[4];
    round_to_int8_avx2(values, inverse, out.q.data() + k * kQK, rounded);
    out.scale[static_cast<size_t>(k)] = scale;
    out.sum[static_cast<size_t>(k)] = reduce_add_avx2(sum);
  }
}
#endif

Int8BlocksFn rows_avx2(GgmlType type) {
#if defined(__x86_64__)
  switch (type) {
    case GgmlType::kQ4_0: return rows_of<GgmlType::kQ4_0>;
    case GgmlType::kQ4_1: return rows_of<GgmlType::kQ4_1>;
    case GgmlType::kQ5_0: return rows_of<GgmlType::kQ5_0>;
    case GgmlType::kQ5_1: return rows_of<GgmlType::kQ5_1>;
    case GgmlType::kQ8_0: return rows_of<GgmlType::kQ8_0>;
    default: break;
  }
#endif
  (void)type;
  return nullptr;
}

Int8BlocksFn rows(GgmlType type, bool avx512) {
  if (avx512) return cpu_has_avx512() ? rows_avx512(type, cpu_has_avx512_vnni()) : nullptr;
  return cpu_has_avx2() ? rows_avx2(type) : nullptr;
}

}  // namespace int8_blocks
}  // namespace kvframe::runtime::quant_kernels
