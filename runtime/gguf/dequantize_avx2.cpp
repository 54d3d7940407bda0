// AVX2 dequantization kernels (dequantize_simd.h), 8 elements a register:
// dequantize_avx512.cpp's steps at half the width, for CPUs without AVX-512.
// As there, the float operations are the scalar code's, unfused
// (-ffp-contract=off).
#include "dequantize_simd.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "half.h"

#define KV_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace kvframe::runtime::gguf_detail {
namespace {
namespace avx2 {

KV_AVX2 inline float fp16(const uint8_t* p) { return _cvtsh_ss(load_u16(p)); }

// 8 bytes at p, unsigned or signed, as 8 32-bit lanes.
KV_AVX2 inline __m256i u8x8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
KV_AVX2 inline __m256i i8x8(const uint8_t* p) {
  return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

KV_AVX2 inline __m256i bits(__m256i v, int mask) { return _mm256_and_si256(v, _mm256_set1_epi32(mask)); }
KV_AVX2 inline __m256i minus(__m256i v, int k) { return _mm256_sub_epi32(v, _mm256_set1_epi32(k)); }
KV_AVX2 inline __m256 to_float(__m256i v) { return _mm256_cvtepi32_ps(v); }

// Bits 0-7 of `byte` as 0 or 0x10 in lanes 0-7: a fifth bit, in place.
KV_AVX2 inline __m256i fifth_bits(uint32_t byte) {
  const __m256i shifts = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return bits(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>((byte & 0xFF) << 4)), shifts), 0x10);
}

// Q5_0 and Q5_1's five-bit quants (five_bit_quants in dequantize_legacy.cpp),
// elements 8h..8h+7 in lo and 16+8h..16+8h+7 in hi.
KV_AVX2 inline void five_bit_quants(const uint8_t* qh_bytes, const uint8_t* qs, int h, __m256i& lo, __m256i& hi) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof qh);
  const __m256i x = u8x8(qs + 8 * h);
  lo = _mm256_or_si256(bits(x, 0x0F), fifth_bits(qh >> (8 * h)));
  hi = _mm256_or_si256(_mm256_srli_epi32(x, 4), fifth_bits(qh >> (16 + 8 * h)));
}

KV_AVX2 void q4_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m256 d = _mm256_set1_ps(fp16(src));
    for (int h = 0; h < 2; ++h) {
      const __m256i x = u8x8(src + 2 + 8 * h);
      _mm256_storeu_ps(dst + 8 * h, _mm256_mul_ps(to_float(minus(bits(x, 0x0F), 8)), d));
      _mm256_storeu_ps(dst + 16 + 8 * h, _mm256_mul_ps(to_float(minus(_mm256_srli_epi32(x, 4), 8)), d));
    }
  }
}

KV_AVX2 void q4_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const __m256 d = _mm256_set1_ps(fp16(src)), m = _mm256_set1_ps(fp16(src + 2));
    for (int h = 0; h < 2; ++h) {
      const __m256i x = u8x8(src + 4 + 8 * h);
      _mm256_storeu_ps(dst + 8 * h, _mm256_add_ps(_mm256_mul_ps(to_float(bits(x, 0x0F)), d), m));
      _mm256_storeu_ps(dst + 16 + 8 * h, _mm256_add_ps(_mm256_mul_ps(to_float(_mm256_srli_epi32(x, 4)), d), m));
    }
  }
}

KV_AVX2 void q5_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const __m256 d = _mm256_set1_ps(fp16(src));
    for (int h = 0; h < 2; ++h) {
      __m256i lo, hi;
      five_bit_quants(src + 2, src + 6, h, lo, hi);
      _mm256_storeu_ps(dst + 8 * h, _mm256_mul_ps(to_float(minus(lo, 16)), d));
      _mm256_storeu_ps(dst + 16 + 8 * h, _mm256_mul_ps(to_float(minus(hi, 16)), d));
    }
  }
}

KV_AVX2 void q5_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const __m256 d = _mm256_set1_ps(fp16(src)), m = _mm256_set1_ps(fp16(src + 2));
    for (int h = 0; h < 2; ++h) {
      __m256i lo, hi;
      five_bit_quants(src + 4, src + 8, h, lo, hi);
      _mm256_storeu_ps(dst + 8 * h, _mm256_add_ps(_mm256_mul_ps(to_float(lo), d), m));
      _mm256_storeu_ps(dst + 16 + 8 * h, _mm256_add_ps(_mm256_mul_ps(to_float(hi), d), m));
    }
  }
}

KV_AVX2 void q8_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const __m256 d = _mm256_set1_ps(fp16(src));
    for (int i = 0; i < 32; i += 8) _mm256_storeu_ps(dst + i, _mm256_mul_ps(to_float(i8x8(src + 2 + i)), d));
  }
}

// Q4_K and Q5_K's d * scale (sm[0..7]) and dmin * min (sm[8..15]), one per
// 32-element sub-block.
KV_AVX2 inline void k4_scales(const uint8_t* block, float (&out)[16]) {
  uint8_t packed[16];
  unpack_k4_scales(block + 4, packed);
  _mm256_storeu_ps(out, _mm256_mul_ps(_mm256_set1_ps(fp16(block)), to_float(u8x8(packed))));
  _mm256_storeu_ps(out + 8, _mm256_mul_ps(_mm256_set1_ps(fp16(block + 2)), to_float(u8x8(packed + 8))));
}

// d1 * q - m1 for the 8 quants in q.
KV_AVX2 inline void scale_min(float* dst, float d1, float m1, __m256i q) {
  _mm256_storeu_ps(dst, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(d1), to_float(q)), _mm256_set1_ps(m1)));
}

KV_AVX2 void q4_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 144) {
    float sm[16];
    k4_scales(src, sm);
    const uint8_t* q = src + 16;
    for (int sub = 0; sub < 8; sub += 2, q += 32, dst += 64) {
      for (int l = 0; l < 32; l += 8) {
        const __m256i x = u8x8(q + l);
        scale_min(dst + l, sm[sub], sm[8 + sub], bits(x, 0x0F));
        scale_min(dst + 32 + l, sm[sub + 1], sm[9 + sub], _mm256_srli_epi32(x, 4));
      }
    }
  }
}

KV_AVX2 void q5_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 176) {
    float sm[16];
    k4_scales(src, sm);
    // Bit k of qh[l] moved to bit 4 + k: sub-block k's fifth bit is then
    // bit 4 after a shift by k.
    __m256i qh[4];
    for (int i = 0; i < 4; ++i) qh[i] = _mm256_slli_epi32(u8x8(src + 16 + 8 * i), 4);
    const uint8_t* ql = src + 48;
    for (int sub = 0; sub < 8; sub += 2, ql += 32, dst += 64) {
      for (int i = 0; i < 4; ++i) {
        const __m256i x = u8x8(ql + 8 * i);
        const __m256i lo = _mm256_or_si256(bits(x, 0x0F), bits(_mm256_srli_epi32(qh[i], sub), 0x10));
        const __m256i hi = _mm256_or_si256(_mm256_srli_epi32(x, 4), bits(_mm256_srli_epi32(qh[i], sub + 1), 0x10));
        scale_min(dst + 8 * i, sm[sub], sm[8 + sub], lo);
        scale_min(dst + 32 + 8 * i, sm[sub + 1], sm[9 + sub], hi);
      }
    }
  }
}

// d1 * q for the 8 quants in q.
KV_AVX2 inline void scale(float* dst, float d1, __m256i q) {
  _mm256_storeu_ps(dst, _mm256_mul_ps(_mm256_set1_ps(d1), to_float(q)));
}

KV_AVX2 void q6_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 210) {
    float sc[16];  // d * scale, one per 16 elements
    const __m256 d = _mm256_set1_ps(fp16(src + 208));
    _mm256_storeu_ps(sc, _mm256_mul_ps(d, to_float(i8x8(src + 192))));
    _mm256_storeu_ps(sc + 8, _mm256_mul_ps(d, to_float(i8x8(src + 200))));
    const uint8_t* ql = src;
    const uint8_t* qh = src + 128;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, dst += 128) {
      for (int l = 0; l < 32; l += 8) {
        const __m256i a = u8x8(ql + l), c = u8x8(ql + 32 + l), h = u8x8(qh + l);
        const float* s = sc + 8 * half + l / 16;
        scale(dst + l, s[0], minus(_mm256_or_si256(bits(a, 0x0F), bits(_mm256_slli_epi32(h, 4), 0x30)), 32));
        scale(dst + 32 + l, s[2], minus(_mm256_or_si256(bits(c, 0x0F), bits(_mm256_slli_epi32(h, 2), 0x30)), 32));
        scale(dst + 64 + l, s[4], minus(_mm256_or_si256(_mm256_srli_epi32(a, 4), bits(h, 0x30)), 32));
        scale(dst + 96 + l, s[6],
              minus(_mm256_or_si256(_mm256_srli_epi32(c, 4), bits(_mm256_srli_epi32(h, 2), 0x30)), 32));
      }
    }
  }
}

KV_AVX2 void q2_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 84) {
    float sc[16], mn[16];  // d * scale and dmin * min, one per 16 elements
    const __m256 d = _mm256_set1_ps(fp16(src + 80)), dmin = _mm256_set1_ps(fp16(src + 82));
    for (int i = 0; i < 16; i += 8) {
      const __m256i packed = u8x8(src + i);
      _mm256_storeu_ps(sc + i, _mm256_mul_ps(d, to_float(bits(packed, 0x0F))));
      _mm256_storeu_ps(mn + i, _mm256_mul_ps(dmin, to_float(_mm256_srli_epi32(packed, 4))));
    }
    const uint8_t* qs = src + 16;
    for (int half = 0; half < 2; ++half, qs += 32, dst += 128) {
      for (int l = 0; l < 32; l += 8) {
        const __m256i x = u8x8(qs + l);
        for (int j = 0; j < 4; ++j) {
          const int group = 8 * half + 2 * j + l / 16;
          scale_min(dst + 32 * j + l, sc[group], mn[group], bits(_mm256_srli_epi32(x, 2 * j), 3));
        }
      }
    }
  }
}

// Q3_K has no mins: the scalar code's "- 0.0f" leaves every value as it is.
KV_AVX2 void q3_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 110) {
    uint8_t packed[16];
    unpack_q3_k_scale_bytes(src + 96, packed);
    float sc[16];  // d * (scale - 32), one per 16 elements
    const __m256 d = _mm256_set1_ps(fp16(src + 108));
    _mm256_storeu_ps(sc, _mm256_mul_ps(d, to_float(minus(u8x8(packed), 32))));
    _mm256_storeu_ps(sc + 8, _mm256_mul_ps(d, to_float(minus(u8x8(packed + 8), 32))));
    // Bit k of hmask[l] moved to bit 2 + k: element 32k + l's third bit is
    // then bit 2 after a shift by k.
    __m256i hm[4];
    for (int i = 0; i < 4; ++i) hm[i] = _mm256_slli_epi32(u8x8(src + 8 * i), 2);
    const uint8_t* qs = src + 32;
    for (int half = 0; half < 2; ++half, qs += 32, dst += 128) {
      for (int i = 0; i < 4; ++i) {
        const __m256i x = u8x8(qs + 8 * i);
        for (int j = 0; j < 4; ++j) {
          const __m256i low = bits(_mm256_srli_epi32(x, 2 * j), 3);
          const __m256i third = bits(_mm256_srli_epi32(hm[i], 4 * half + j), 4);
          scale(dst + 32 * j + 8 * i, sc[8 * half + 2 * j + i / 2], minus(_mm256_or_si256(low, third), 4));
        }
      }
    }
  }
}

}  // namespace avx2
}  // namespace

BlockKernel avx2_kernel(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return avx2::q4_0;
    case GgmlType::kQ4_1: return avx2::q4_1;
    case GgmlType::kQ5_0: return avx2::q5_0;
    case GgmlType::kQ5_1: return avx2::q5_1;
    case GgmlType::kQ8_0: return avx2::q8_0;
    case GgmlType::kQ2_K: return avx2::q2_k;
    case GgmlType::kQ3_K: return avx2::q3_k;
    case GgmlType::kQ4_K: return avx2::q4_k;
    case GgmlType::kQ5_K: return avx2::q5_k;
    case GgmlType::kQ6_K: return avx2::q6_k;
    default: return nullptr;
  }
}

}  // namespace kvframe::runtime::gguf_detail

#undef KV_AVX2
#endif  // __x86_64__
