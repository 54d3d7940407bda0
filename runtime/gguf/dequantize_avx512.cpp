// AVX-512 dequantization kernels (dequantize_simd.h), 16 elements a
// register. Each follows its scalar twin in dequantize_legacy.cpp or
// dequantize_kquants.cpp: quants are widened to 32-bit lanes, put together
// there with the same integer steps, converted, then multiplied and offset
// by the same float operations in the same order. The library builds with
// -ffp-contract=off, which this relies on: AVX-512F brings FMA of its own,
// and GCC otherwise fuses the multiply and the subtract.
#include "dequantize_simd.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "half.h"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*() and then warn
// that it may be used uninitialized (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define KV_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))

namespace kvframe::runtime::gguf_detail {
namespace {
namespace avx512 {

KV_AVX512 inline float fp16(const uint8_t* p) { return _cvtsh_ss(load_u16(p)); }

// 16 bytes at p, unsigned or signed, as 16 32-bit lanes.
KV_AVX512 inline __m512i u8x16(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
KV_AVX512 inline __m512i i8x16(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

KV_AVX512 inline __m512i bits(__m512i v, int mask) { return _mm512_and_si512(v, _mm512_set1_epi32(mask)); }
KV_AVX512 inline __m512i minus(__m512i v, int k) { return _mm512_sub_epi32(v, _mm512_set1_epi32(k)); }
KV_AVX512 inline __m512 to_float(__m512i v) { return _mm512_cvtepi32_ps(v); }

// Q5_0 and Q5_1's 32 five-bit quants (five_bit_quants in
// dequantize_legacy.cpp): bit j of qh is element j's fifth bit, in a mask
// register as it is.
KV_AVX512 inline void five_bit_quants(const uint8_t* qh_bytes, const uint8_t* qs, __m512i& lo, __m512i& hi) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof qh);
  const __m512i x = u8x16(qs), fifth = _mm512_set1_epi32(0x10);
  lo = bits(x, 0x0F);
  hi = _mm512_srli_epi32(x, 4);
  lo = _mm512_mask_or_epi32(lo, static_cast<__mmask16>(qh), lo, fifth);
  hi = _mm512_mask_or_epi32(hi, static_cast<__mmask16>(qh >> 16), hi, fifth);
}

KV_AVX512 void q4_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m512 d = _mm512_set1_ps(fp16(src));
    const __m512i x = u8x16(src + 2);
    _mm512_storeu_ps(dst, _mm512_mul_ps(to_float(minus(bits(x, 0x0F), 8)), d));
    _mm512_storeu_ps(dst + 16, _mm512_mul_ps(to_float(minus(_mm512_srli_epi32(x, 4), 8)), d));
  }
}

KV_AVX512 void q4_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const __m512 d = _mm512_set1_ps(fp16(src)), m = _mm512_set1_ps(fp16(src + 2));
    const __m512i x = u8x16(src + 4);
    _mm512_storeu_ps(dst, _mm512_add_ps(_mm512_mul_ps(to_float(bits(x, 0x0F)), d), m));
    _mm512_storeu_ps(dst + 16, _mm512_add_ps(_mm512_mul_ps(to_float(_mm512_srli_epi32(x, 4)), d), m));
  }
}

KV_AVX512 void q5_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const __m512 d = _mm512_set1_ps(fp16(src));
    __m512i lo, hi;
    five_bit_quants(src + 2, src + 6, lo, hi);
    _mm512_storeu_ps(dst, _mm512_mul_ps(to_float(minus(lo, 16)), d));
    _mm512_storeu_ps(dst + 16, _mm512_mul_ps(to_float(minus(hi, 16)), d));
  }
}

KV_AVX512 void q5_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const __m512 d = _mm512_set1_ps(fp16(src)), m = _mm512_set1_ps(fp16(src + 2));
    __m512i lo, hi;
    five_bit_quants(src + 4, src + 8, lo, hi);
    _mm512_storeu_ps(dst, _mm512_add_ps(_mm512_mul_ps(to_float(lo), d), m));
    _mm512_storeu_ps(dst + 16, _mm512_add_ps(_mm512_mul_ps(to_float(hi), d), m));
  }
}

KV_AVX512 void q8_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const __m512 d = _mm512_set1_ps(fp16(src));
    _mm512_storeu_ps(dst, _mm512_mul_ps(to_float(i8x16(src + 2)), d));
    _mm512_storeu_ps(dst + 16, _mm512_mul_ps(to_float(i8x16(src + 18)), d));
  }
}

// Q4_K and Q5_K's d * scale (lanes 0-7) and dmin * min (lanes 8-15), one per
// 32-element sub-block, into out.
KV_AVX512 inline void k4_scales(const uint8_t* block, float (&out)[16]) {
  uint8_t packed[16];
  unpack_k4_scales(block + 4, packed);
  const __m512 d = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(fp16(block)), _mm512_set1_ps(fp16(block + 2)));
  _mm512_storeu_ps(out, _mm512_mul_ps(d, to_float(u8x16(packed))));
}

// d1 * q - m1 for the 16 quants in q.
KV_AVX512 inline void scale_min(float* dst, float d1, float m1, __m512i q) {
  _mm512_storeu_ps(dst, _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(d1), to_float(q)), _mm512_set1_ps(m1)));
}

KV_AVX512 void q4_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 144) {
    float sm[16];
    k4_scales(src, sm);
    const uint8_t* q = src + 16;
    for (int sub = 0; sub < 8; sub += 2, q += 32, dst += 64) {
      for (int h = 0; h < 2; ++h) {
        const __m512i x = u8x16(q + 16 * h);
        scale_min(dst + 16 * h, sm[sub], sm[8 + sub], bits(x, 0x0F));
        scale_min(dst + 32 + 16 * h, sm[sub + 1], sm[9 + sub], _mm512_srli_epi32(x, 4));
      }
    }
  }
}

KV_AVX512 void q5_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 176) {
    float sm[16];
    k4_scales(src, sm);
    // Bit k of qh[l] moved to bit 4 + k: sub-block k's fifth bit is then
    // bit 4 after a shift by k.
    const __m512i qh[2] = {_mm512_slli_epi32(u8x16(src + 16), 4), _mm512_slli_epi32(u8x16(src + 32), 4)};
    const uint8_t* ql = src + 48;
    for (int sub = 0; sub < 8; sub += 2, ql += 32, dst += 64) {
      for (int h = 0; h < 2; ++h) {
        const __m512i x = u8x16(ql + 16 * h);
        const __m512i lo = _mm512_or_si512(bits(x, 0x0F), bits(_mm512_srli_epi32(qh[h], sub), 0x10));
        const __m512i hi = _mm512_or_si512(_mm512_srli_epi32(x, 4), bits(_mm512_srli_epi32(qh[h], sub + 1), 0x10));
        scale_min(dst + 16 * h, sm[sub], sm[8 + sub], lo);
        scale_min(dst + 32 + 16 * h, sm[sub + 1], sm[9 + sub], hi);
      }
    }
  }
}

// d1 * q for the 16 quants in q.
KV_AVX512 inline void scale(float* dst, float d1, __m512i q) {
  _mm512_storeu_ps(dst, _mm512_mul_ps(_mm512_set1_ps(d1), to_float(q)));
}

KV_AVX512 void q6_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 210) {
    float sc[16];  // d * scale, one per 16 elements
    _mm512_storeu_ps(sc, _mm512_mul_ps(_mm512_set1_ps(fp16(src + 208)), to_float(i8x16(src + 192))));
    const uint8_t* ql = src;
    const uint8_t* qh = src + 128;
    for (int half = 0; half < 2; ++half, ql += 64, qh += 32, dst += 128) {
      for (int g = 0; g < 2; ++g) {
        const __m512i a = u8x16(ql + 16 * g), c = u8x16(ql + 32 + 16 * g), h = u8x16(qh + 16 * g);
        const float* s = sc + 8 * half + g;
        scale(dst + 16 * g, s[0], minus(_mm512_or_si512(bits(a, 0x0F), bits(_mm512_slli_epi32(h, 4), 0x30)), 32));
        scale(dst + 32 + 16 * g, s[2],
              minus(_mm512_or_si512(bits(c, 0x0F), bits(_mm512_slli_epi32(h, 2), 0x30)), 32));
        scale(dst + 64 + 16 * g, s[4], minus(_mm512_or_si512(_mm512_srli_epi32(a, 4), bits(h, 0x30)), 32));
        scale(dst + 96 + 16 * g, s[6],
              minus(_mm512_or_si512(_mm512_srli_epi32(c, 4), bits(_mm512_srli_epi32(h, 2), 0x30)), 32));
      }
    }
  }
}

KV_AVX512 void q2_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 84) {
    float sc[16], mn[16];  // d * scale and dmin * min, one per 16 elements
    const __m512i packed = u8x16(src);
    _mm512_storeu_ps(sc, _mm512_mul_ps(_mm512_set1_ps(fp16(src + 80)), to_float(bits(packed, 0x0F))));
    _mm512_storeu_ps(mn, _mm512_mul_ps(_mm512_set1_ps(fp16(src + 82)), to_float(_mm512_srli_epi32(packed, 4))));
    const uint8_t* qs = src + 16;
    for (int half = 0; half < 2; ++half, qs += 32, dst += 128) {
      for (int h = 0; h < 2; ++h) {
        const __m512i x = u8x16(qs + 16 * h);
        for (int j = 0; j < 4; ++j) {
          const int group = 8 * half + 2 * j + h;
          scale_min(dst + 32 * j + 16 * h, sc[group], mn[group], bits(_mm512_srli_epi32(x, 2 * j), 3));
        }
      }
    }
  }
}

// Q3_K has no mins: the scalar code's "- 0.0f" leaves every value as it is.
KV_AVX512 void q3_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  for (int64_t b = 0; b < n_blocks; ++b, src += 110) {
    uint8_t packed[16];
    unpack_q3_k_scale_bytes(src + 96, packed);
    float sc[16];  // d * (scale - 32), one per 16 elements
    _mm512_storeu_ps(sc, _mm512_mul_ps(_mm512_set1_ps(fp16(src + 108)), to_float(minus(u8x16(packed), 32))));
    // Bit k of hmask[l] moved to bit 2 + k: element 32k + l's third bit is
    // then bit 2 after a shift by k.
    const __m512i hm[2] = {_mm512_slli_epi32(u8x16(src), 2), _mm512_slli_epi32(u8x16(src + 16), 2)};
    const uint8_t* qs = src + 32;
    for (int half = 0; half < 2; ++half, qs += 32, dst += 128) {
      for (int h = 0; h < 2; ++h) {
        const __m512i x = u8x16(qs + 16 * h);
        for (int j = 0; j < 4; ++j) {
          const __m512i low = bits(_mm512_srli_epi32(x, 2 * j), 3);
          const __m512i third = bits(_mm512_srli_epi32(hm[h], 4 * half + j), 4);
          scale(dst + 32 * j + 16 * h, sc[8 * half + 2 * j + h], minus(_mm512_or_si512(low, third), 4));
        }
      }
    }
  }
}

}  // namespace avx512
}  // namespace

BlockKernel avx512_kernel(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return avx512::q4_0;
    case GgmlType::kQ4_1: return avx512::q4_1;
    case GgmlType::kQ5_0: return avx512::q5_0;
    case GgmlType::kQ5_1: return avx512::q5_1;
    case GgmlType::kQ8_0: return avx512::q8_0;
    case GgmlType::kQ2_K: return avx512::q2_k;
    case GgmlType::kQ3_K: return avx512::q3_k;
    case GgmlType::kQ4_K: return avx512::q4_k;
    case GgmlType::kQ5_K: return avx512::q5_k;
    case GgmlType::kQ6_K: return avx512::q6_k;
    default: return nullptr;
  }
}

}  // namespace kvframe::runtime::gguf_detail

#undef KV_AVX512
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // __x86_64__
