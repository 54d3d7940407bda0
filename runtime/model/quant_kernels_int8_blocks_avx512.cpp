// The 32-value block types' int8 decoding steps (quant_kernels_int8_blocks.cpp)
// in AVX-512: the same activations (int8_blocks::quantize(), rounded per 32
// values) and the same integer dot products per block, two blocks to a
// 512-bit register, and with VNNI one VPDPBUSD where AVX2 takes VPMADDUBSW
// and VPMADDWD. A block's two fp16 factors (d, and Q4_1's and Q5_1's m) are
// widened two blocks at a time; Q5's fifth bits go in as a 64-bit mask.
#include "quant_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvframe::runtime::quant_kernels {
namespace int8_blocks {
// A namespace of its own: a unity build compiles this file beside the AVX2
// one, whose file-local names are the same.
namespace avx512 {
namespace {

constexpr int64_t kQK = 32;

#if defined(__x86_64__)
inline uint16_t u16_at(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Blocks b0 and b1's q as 64 bytes (b0's 32 values, then b1's), unsigned
// before their offset (0..15, 0..31), Q8_0's signed as stored.
template <GgmlType T>
KV_AVX512_INT8 inline __m512i pair_quants(const uint8_t* b0, const uint8_t* b1) {
  constexpr BlockLayout kLayout = block_layout(T);
  if constexpr (T == GgmlType::kQ8_0) {
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b0 + kLayout.quants))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b1 + kLayout.quants)), 1);
  } else {
    const __m512i both = _mm512_castsi256_si512(
        _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0 + kLayout.quants))),
                                _mm_loadu_si128(reinterpret_cast<const __m128i*>(b1 + kLayout.quants)), 1));
    // Each block's 16 bytes twice, the copy shifted: low nibbles (elements
    // 0..15), then high ones (16..31).
    const __m512i twice = _mm512_shuffle_i64x2(both, both, _MM_SHUFFLE(1, 1, 0, 0));
    __m512i q = _mm512_and_si512(_mm512_srlv_epi64(twice, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)),
                                 _mm512_set1_epi8(0x0F));
    if constexpr (kLayout.fifth_bits >= 0) {
      uint32_t h0, h1;
      std::memcpy(&h0, b0 + kLayout.fifth_bits, sizeof h0);
      std::memcpy(&h1, b1 + kLayout.fifth_bits, sizeof h1);
      q = _mm512_mask_add_epi8(q, _cvtu64_mask64(h0 | uint64_t{h1} << 32), q, _mm512_set1_epi8(0x10));
    }
    return q;
  }
}

// Blocks' q (pair_quants()) times their 32 activations each, as int32
// lanes (0..7 the first block's, 8..15 the second's): unsigned q directly;
// q - offset as q's product less offset times the activations'; Q8_0's
// signed bytes through their magnitudes, the activations taking their signs.
template <GgmlType T, class Products>
KV_AVX512_INT8 inline __m512i pair_dot(__m512i q, __m512i a) {
  constexpr BlockLayout kLayout = block_layout(T);
  if constexpr (T == GgmlType::kQ8_0) {
    const __m512i signed_a = _mm512_mask_sub_epi8(a, _mm512_movepi8_mask(q), _mm512_setzero_si512(), a);
    return Products::dot_bytes(_mm512_abs_epi8(q), signed_a);
  } else if constexpr (kLayout.offset != 0) {
    return _mm512_sub_epi32(Products::dot_bytes(q, a), Products::dot_bytes(_mm512_set1_epi8(kLayout.offset), a));
  } else {
    return Products::dot_bytes(q, a);
  }
}

// [d0, m0, d1, m1] as fp32 (m 0 for the types without one); times the
// activations' [scale0, sum0, scale1, sum1], a pair's factors. Where m
// follows d, one 32-bit load takes both.
template <GgmlType T>
KV_AVX512_INT8 inline __m128 pair_halves(const uint8_t* b0, const uint8_t* b1) {
  constexpr BlockLayout kLayout = block_layout(T);
  static_assert(kLayout.minimum < 0 || kLayout.minimum == 2, "m right after d");
  __m128i h;
  if constexpr (kLayout.minimum == 2) {
    uint32_t dm0, dm1;
    std::memcpy(&dm0, b0, sizeof dm0);
    std::memcpy(&dm1, b1, sizeof dm1);
    h = _mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(dm0)), static_cast<int>(dm1), 1);
  } else {
    h = _mm_insert_epi16(_mm_cvtsi32_si128(u16_at(b0)), u16_at(b1), 2);
  }
  return _mm_cvtph_ps(h);
}

// Lanes 0..7 of a pair's products take factor 0 (b0's d), 8..15 factor 2
// (b1's); `offsets` gathers lanes 1 and 3 (m times the sums).
KV_AVX512_INT8 inline void accumulate(__m512i dot, __m128 factors, __m512& acc, __m128& offsets) {
  const __m512i by_block = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
  acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_permutexvar_ps(by_block, _mm512_castps128_ps512(factors)), acc);
  offsets = _mm_add_ps(offsets, factors);
}

// One weight row times activation rows first .. first + R - 1, each pair of
// blocks unpacked once for the R rows (in_row_blocks()).
template <GgmlType T, class Products>
struct BlockRow {
  const uint8_t* row;
  int64_t blocks, bytes, cols, r;
  const Int8Blocks& x;
  float* y;
  int64_t y_stride;

  // Blocks k and k + 1 into each row's acc and offsets.
  template <int R>
  KV_AVX512_INT8 void add_pair(int64_t k, int64_t first, __m512 (&acc)[R], __m128 (&offsets)[R]) const {
    const uint8_t* b0 = row + k * bytes;
    const __m512i q = pair_quants<T>(b0, b0 + bytes);
    const __m128 halves = pair_halves<T>(b0, b0 + bytes);
    for (int i = 0; i < R; ++i) {
      const int64_t at = (first + i) * blocks + k;
      const __m512i dot = pair_dot<T, Products>(q, _mm512_loadu_si512(x.q.data() + (first + i) * cols + k * kQK));
      const __m128 activations =
          _mm_unpacklo_ps(_mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(x.scale.data() + at))),
                          _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(x.sum.data() + at))));
      accumulate(dot, _mm_mul_ps(halves, activations), acc[i], offsets[i]);
    }
  }

  template <int R>
  KV_AVX512_INT8 void rows(int64_t first) const {
    // Two accumulators a row: two independent FMA chains.
    __m512 acc0[R], acc1[R];
    __m128 offsets[R];
    for (int i = 0; i < R; ++i) {
      acc0[i] = _mm512_setzero_ps();
      acc1[i] = _mm512_setzero_ps();
      offsets[i] = _mm_setzero_ps();
    }
    int64_t k = 0;
    for (; k + 4 <= blocks; k += 4) {
      add_pair<R>(k, first, acc0, offsets);
      add_pair<R>(k + 2, first, acc1, offsets);
    }
    if (k + 2 <= blocks) {
      add_pair<R>(k, first, acc0, offsets);
      k += 2;
    }
    if (k < blocks) {  // an odd count's last block, paired with itself and activations of zero
      const uint8_t* b0 = row + k * bytes;
      const __m512i q = pair_quants<T>(b0, b0);
      const __m128 halves = pair_halves<T>(b0, b0);
      for (int i = 0; i < R; ++i) {
        const int64_t at = (first + i) * blocks + k;
        const __m512i a0 = _mm512_zextsi256_si512(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q.data() + (first + i) * cols + k * kQK)));
        accumulate(pair_dot<T, Products>(q, a0), _mm_mul_ps(halves, _mm_setr_ps(x.scale[at], x.sum[at], 0, 0)),
                   acc1[i], offsets[i]);
      }
    }
    for (int i = 0; i < R; ++i) {
      float total = _mm512_reduce_add_ps(_mm512_add_ps(acc0[i], acc1[i]));
      if constexpr (block_layout(T).minimum >= 0) {
        total += _mm_cvtss_f32(
            _mm_add_ss(_mm_shuffle_ps(offsets[i], offsets[i], 1), _mm_shuffle_ps(offsets[i], offsets[i], 3)));
      }
      y[(first + i) * y_stride + r] = total;
    }
  }
};

template <GgmlType T, class Products>
KV_AVX512_INT8 inline void rows_of(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                                   const Int8Blocks& x, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  const int64_t blocks = cols / kQK, bytes = ggml_type_size(T).block_bytes;
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + (order ? order[r] : r) * row_bytes;
    in_row_blocks(x.n, BlockRow<T, Products>{row, blocks, bytes, cols, r, x, y, y_stride});
  }
}

template <GgmlType T>
KV_AVX512_INT8 void rows_plain(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                               const Int8Blocks& x, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  rows_of<T, Avx512Products>(w, row_bytes, order, cols, x, y, y_stride, begin, end);
}

template <GgmlType T>
__attribute__((flatten)) KV_AVX512_VNNI void rows_vnni(const uint8_t* w, int64_t row_bytes, const int32_t* order,
                                                      int64_t cols, const Int8Blocks& x, float* y, int64_t y_stride,
                                                      int64_t begin, int64_t end) {
  rows_of<T, Avx512VnniProducts>(w, row_bytes, order, cols, x, y, y_stride, begin, end);
}

template <GgmlType T>
Int8BlocksFn kernel_of(bool vnni) {
  return vnni ? rows_vnni<T> : rows_plain<T>;
}
#endif  // __x86_64__

}  // namespace
}  // namespace avx512

Int8BlocksFn rows_avx512(GgmlType type, bool vnni) {
#if defined(__x86_64__)
  switch (type) {
    case GgmlType::kQ4_0: return avx512::kernel_of<GgmlType::kQ4_0>(vnni);
    case GgmlType::kQ4_1: return avx512::kernel_of<GgmlType::kQ4_1>(vnni);
    case GgmlType::kQ5_0: return avx512::kernel_of<GgmlType::kQ5_0>(vnni);
    case GgmlType::kQ5_1: return avx512::kernel_of<GgmlType::kQ5_1>(vnni);
    case GgmlType::kQ8_0: return avx512::kernel_of<GgmlType::kQ8_0>(vnni);
    default: break;
  }
#endif
  (void)type;
  (void)vnni;
  return nullptr;
}

}  // namespace int8_blocks
}  // namespace kvframe::runtime::quant_kernels
