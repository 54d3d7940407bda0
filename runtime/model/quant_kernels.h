// Kernels of QuantMatrix::multiply (quant_matrix.h) for types that have one
// of their own beyond quant_matrix.cpp's 32-value blocks: the K-quants a
// Q4_K_M file is mostly made of (quant_kernels_kquants.cpp, and with int8
// activations quant_kernels_int8.cpp); and what those files share: the CPU
// checks and the K-quant blocks' layouts.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps() and then warn
// that it may be used uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime::quant_kernels {

// Whether this CPU runs the AVX-512 (F, BW, VL, DQ) kernels, those with
// AVX-512-BF16 too, and the AVX2 (with FMA and F16C) ones.
bool cpu_has_avx512();
bool cpu_has_avx512_bf16();
bool cpu_has_avx2();
// AVX-512 with VNNI (VPDPBUSD, VPDPWSSD): the int8 kernels' products and
// their sums in one instruction where two or three do without.
bool cpu_has_avx512_vnni();

#if defined(__x86_64__)
// 16 bf16 values at p (unaligned) widened to fp32: bf16 is the top half of an fp32.
__attribute__((target("avx512f"))) inline __m512 bf16x16_to_ps(const void* p) {
  const __m256i raw = _mm256_loadu_si256(static_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(raw), 16));
}

// A block's fp16 scale (unaligned).
inline float fp16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return _cvtsh_ss(h);
}

// Q4_K's 8 six-bit scales and mins, packed into 12 bytes (ggml's
// get_scale_min_k4): bytes 0-3 scales 0-3 and the top bits of scales 4-7,
// bytes 4-7 the same for the mins, bytes 8-11 the low bits of scales and
// mins 4-7.
struct Q4kScales {
  int scale[8], minimum[8];
};
inline Q4kScales q4_k_scales(const uint8_t* q) {
  Q4kScales out;
  for (int j = 0; j < 4; ++j) {
    out.scale[j] = q[j] & 63;
    out.minimum[j] = q[j + 4] & 63;
    out.scale[j + 4] = (q[j + 8] & 0x0F) | ((q[j] >> 6) << 4);
    out.minimum[j + 4] = (q[j + 8] >> 4) | ((q[j + 4] >> 6) << 4);
  }
  return out;
}

// The same 12 bytes unpacked four at a time in 32-bit words, as bytes, for
// the int8 kernels: scales 0-7 in `scales`' low 8 bytes, mins 0-7 in `mins`'.
struct Q4kBytes {
  __m128i scales, mins;
};
inline Q4kBytes q4_k_bytes(const uint8_t* q) {
  uint32_t w[3];
  std::memcpy(w, q, sizeof w);
  constexpr uint32_t kLow6 = 0x3F3F3F3F, kLow4 = 0x0F0F0F0F, kTop2 = 0x30303030;
  const uint64_t scales = (w[0] & kLow6) | uint64_t{(w[2] & kLow4) | ((w[0] >> 2) & kTop2)} << 32;
  const uint64_t mins = (w[1] & kLow6) | uint64_t{((w[2] >> 4) & kLow4) | ((w[1] >> 2) & kTop2)} << 32;
  return {_mm_cvtsi64_si128(static_cast<int64_t>(scales)), _mm_cvtsi64_si128(static_cast<int64_t>(mins))};
}

// A Q4_K super-block's mins term (dmin times min_j times the activations'
// fp32 sum over group j), added into `acc`'s lanes: the int8 kernels keep it
// in a vector summed once per row. The factors dmin min_j are the weight
// block's, the same for every activation row: a kernel taking several rows
// makes them once.
__attribute__((target("avx2,fma,f16c"))) inline __m256 q4_k_minimum_factors(__m128i mins, float dmin) {
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(mins)), _mm256_set1_ps(dmin));
}
__attribute__((target("avx2,fma,f16c"))) inline __m256 q4_k_minimums(__m128i mins, float dmin, const float* group_sums,
                                                                      __m256 acc) {
  return _mm256_fmadd_ps(q4_k_minimum_factors(mins, dmin), _mm256_loadu_ps(group_sums), acc);
}

// One half (128 values) of a Q6_K super-block b as four runs of 32 six-bit
// values (0..63, before ggml's -32), ggml's q1..q4: values 32 k .. 32 k + 31
// of the half in runs[k].
__attribute__((target("avx2"))) inline void q6_k_runs(const uint8_t* b, int half, __m256i (&runs)[4]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(3);
  const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * half));
  const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 64 * half + 32));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * half));
  runs[0] = _mm256_or_si256(_mm256_and_si256(ql0, low4), _mm256_slli_epi16(_mm256_and_si256(qh, two), 4));
  runs[1] = _mm256_or_si256(_mm256_and_si256(ql1, low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), two), 4));
  runs[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), two), 4));
  runs[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                            _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), two), 4));
}
#endif

#if defined(__x86_64__)
// What the AVX2 int8 kernels share: the sum of 8 floats, the rounding step
// of values whose largest |value| is somewhere in `largest`'s lanes
// (that / 127), and 32 values times 1 / step rounded to int8 at `out`
// (nearest, ties to even: the default MXCSR; never past 127, so the
// saturating packs keep them), their int32 roundings left in `rounded`.
__attribute__((target("avx2"))) inline float reduce_add_avx2(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
__attribute__((target("avx2"))) inline float int8_step_avx2(__m256 largest) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m) / 127.0f;
}
__attribute__((target("avx2"))) inline void round_to_int8_avx2(const __m256 (&values)[4], __m256 inverse, int8_t* out,
                                                                __m256i (&rounded)[4]) {
  for (int j = 0; j < 4; ++j) rounded[j] = _mm256_cvtps_epi32(_mm256_mul_ps(values[j], inverse));
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(rounded[0], rounded[1]),
                                           _mm256_packs_epi32(rounded[2], rounded[3]));
  // packs interleaves the 128-bit lanes; this puts the 32 bytes back in order.
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}
#endif

#if defined(__x86_64__)
#define KV_AVX512_INT8 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))
#define KV_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,fma,f16c")))
// The AVX-512 int8 kernels' integer products, without VNNI and with it: the
// same integers (no step saturates at the kernels' magnitudes: at most 2 x
// 128 x 127 per int16 pair). A kernel is a template over one of these; its
// VNNI instance is a function of VNNI's target marked `flatten`, so these
// inline into it.
struct Avx512Products {
  // Unsigned bytes times signed bytes, each four products summed to int32.
  KV_AVX512_INT8 static __m512i dot_bytes(__m512i u, __m512i s) {
    return _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1));
  }
  // acc plus int16 a times int16 b, each two products summed to int32.
  KV_AVX512_INT8 static __m512i add_dot_words(__m512i acc, __m512i a, __m512i b) {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
  }
};
struct Avx512VnniProducts {
  KV_AVX512_VNNI static __m512i dot_bytes(__m512i u, __m512i s) {
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s);
  }
  KV_AVX512_VNNI static __m512i add_dot_words(__m512i acc, __m512i a, __m512i b) {
    return _mm512_dpwssd_epi32(acc, a, b);
  }
};

// Activation rows multiplied together: each weight super-block is unpacked
// once for up to this many rows (a step batched over sessions, NPCs or
// matches), not once per row. Every row's operations stay those it would
// take alone, in the same order, so a batch's rows equal each row alone bit
// for bit.
constexpr int kRowsTogether = 4;

// together.rows<R>(i) for the R rows from i, in blocks of kRowsTogether,
// then the rest (a functor, not a lambda: a lambda would not take the
// kernel's instruction set).
template <class Together>
KV_AVX512_INT8 inline void in_row_blocks(int64_t n, const Together& together) {
  int64_t i = 0;
  for (; i + kRowsTogether <= n; i += kRowsTogether) together.template rows<kRowsTogether>(i);
  switch (n - i) {
    case 3: together.template rows<3>(i); break;
    case 2: together.template rows<2>(i); break;
    case 1: together.template rows<1>(i); break;
    default: break;
  }
}
#endif

// Rows [begin, end) of y[i, r] = x[i] . W[r] for the n rows of x [n, cols];
// row r of W at w + (order ? order[r] : r) * row_bytes.
using RowsFn = void (*)(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const float* x,
                        int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end);

// The AVX-512 kernel of `type` (Q4_K, Q6_K), or null: the caller then
// dequantizes a row at a time. Only for a CPU with AVX-512 (F, BW, VL, DQ).
RowsFn avx512_rows(GgmlType type);

// A row of `type` (Q4_K) written straight as bf16, the values
// dequantize() gives rounded to nearest even, or null (another type, or a
// CPU without AVX-512-BF16): multiply_tiles then dequantizes and rounds.
using Bf16RowFn = void (*)(const uint8_t* row, int64_t cols, uint16_t* out);
Bf16RowFn avx512_bf16_row(GgmlType type);

// Activation rows rounded to int8 per 256 values (quant_kernels_int8.cpp):
// block k's values are q[256 k ..] * scale[k]; sum[8 k + j] is the exact
// fp32 sum of its group j of 32 values, qsum16[16 k + j] that of the q of
// its group j of 16.
struct Int8Rows {
  int64_t n = 0;
  std::vector<int8_t> q;
  std::vector<float> scale, sum;
  std::vector<int32_t> qsum16;
};
// x [n, cols] (cols a multiple of 256) into out; only where cpu_has_avx2().
// The integers and scales are the same on every CPU.
void quantize_rows(const float* x, int64_t n, int64_t cols, Int8Rows& out);
using Int8RowsFn = void (*)(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                            const Int8Rows& x, float* y, int64_t y_stride, int64_t begin, int64_t end);
// The int8 kernel of `type` (Q4_K, Q6_K) in AVX-512 (avx512; with VNNI
// where the CPU has it) or AVX2, or null (another type, or a CPU without
// that instruction set): the caller then multiplies fp32 activations.
Int8RowsFn int8_rows(GgmlType type, bool avx512);
// The AVX-512 one without VNNI or with it (vnni: only where
// cpu_has_avx512_vnni()); int8_rows() picks by the CPU, tests take both.
Int8RowsFn int8_rows_avx512(GgmlType type, bool vnni);

// The AVX2 kernels (quant_kernels_int8_avx2.cpp), for the two above.
namespace int8_avx2 {
void quantize(const float* x, int64_t n, int64_t cols, Int8Rows& out);
Int8RowsFn rows(GgmlType type);
}  // namespace int8_avx2

// Where a 32-value block type keeps its fields (byte offsets in a block):
// fp16 d at 0; fp16 m (value = d q + m) at `minimum`, or -1; the quants
// (16 bytes of nibbles, elements 0..15 low, 16..31 high; Q8_0's 32 signed
// bytes) at `quants`; Q5's fifth bits (bit j for element j) at
// `fifth_bits`, or -1; and what comes off the unsigned q (value = d (q -
// offset)).
struct BlockLayout {
  int minimum, quants, fifth_bits, offset;
};
constexpr BlockLayout block_layout(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return {-1, 2, -1, 8};
    case GgmlType::kQ4_1: return {2, 4, -1, 0};
    case GgmlType::kQ5_0: return {-1, 6, 2, 16};
    case GgmlType::kQ5_1: return {2, 8, 4, 0};
    default: return {-1, 2, -1, 0};  // Q8_0
  }
}

// Activation rows rounded to int8 per 32 values (quant_kernels_int8_blocks.cpp),
// for the 32-value block types: block k's values are q[32 k ..] * scale[k],
// sum[k] their exact fp32 sum.
struct Int8Blocks {
  int64_t n = 0;
  std::vector<int8_t> q;
  std::vector<float> scale, sum;
};
using Int8BlocksFn = void (*)(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                              const Int8Blocks& x, float* y, int64_t y_stride, int64_t begin, int64_t end);
// AVX2 (quant_kernels_int8_blocks.cpp) and AVX-512, VNNI where the CPU has
// it (quant_kernels_int8_blocks_avx512.cpp): the same integers in both.
namespace int8_blocks {
// x [n, cols] (cols a multiple of 32) into out; only where cpu_has_avx2().
// The AVX-512 kernels read the same rounding.
void quantize(const float* x, int64_t n, int64_t cols, Int8Blocks& out);
// The kernel of `type` (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) in AVX-512 (avx512)
// or AVX2, or null (another type, or a CPU without that instruction set).
Int8BlocksFn rows(GgmlType type, bool avx512);
// The AVX2 and AVX-512 kernels, for rows() above; the AVX-512 one without
// VNNI or with it (vnni: only where cpu_has_avx512_vnni()).
Int8BlocksFn rows_avx2(GgmlType type);
Int8BlocksFn rows_avx512(GgmlType type, bool vnni);
}  // namespace int8_blocks

}  // namespace kvframe::runtime::quant_kernels
