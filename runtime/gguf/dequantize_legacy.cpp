// Float types and the 32-element block quants (Q4_0, Q4_1, Q5_0, Q5_1,
// Q8_0). The inner loops are branch-free over fixed-size blocks so the
// compiler vectorizes them; each block's quants are first copied to a local
// array, because uint8_t source bytes may alias the float output and that
// alone stops GCC from vectorizing.
#include <cstring>

#include "dequantize_kernels.h"
#include "half.h"

namespace kvframe::runtime::gguf_detail {
namespace {

constexpr int kQK = 32;  // elements per block

// Q5_0 and Q5_1 give each nibble of Q4_0 / Q4_1 a fifth bit from qh, 4 bytes
// read as a little-endian uint32: bit j for element j. As a local array of 32
// five-bit values (ggml's xh_0 / xh_1), elements 0..15 from the low nibbles.
inline void five_bit_quants(const uint8_t* qh_bytes, const uint8_t* qs_bytes, uint8_t (&q)[kQK]) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof qh);
  uint8_t qs[kQK / 2];
  std::memcpy(qs, qs_bytes, sizeof qs);
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = static_cast<uint8_t>((qs[j] & 0x0F) | (((qh >> j) << 4) & 0x10));
    q[j + kQK / 2] = static_cast<uint8_t>((qs[j] >> 4) | ((qh >> (j + 12)) & 0x10));
  }
}

}  // namespace

void dequantize_f16(const uint8_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(halves));
  }
#endif
  for (; i < n; ++i) dst[i] = fp16_to_fp32(load_u16(src + 2 * i));
}

void dequantize_bf16(const uint8_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(load_u16(src + 2 * i));
}

// block_q4_0: fp16 d, then 16 bytes of 4-bit values: low nibbles are elements
// 0..15, high nibbles 16..31; value = (q - 8) * d.
void dequantize_q4_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + kQK / 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK) {
    const float d = load_fp16(src);
    uint8_t qs[kQK / 2];
    std::memcpy(qs, src + 2, sizeof qs);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>((qs[j] & 0x0F) - 8) * d;
      dst[j + kQK / 2] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

// block_q4_1: fp16 d, fp16 m, then nibbles as in Q4_0; value = q * d + m.
void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + 2 + kQK / 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK) {
    const float d = load_fp16(src);
    const float m = load_fp16(src + 2);
    uint8_t qs[kQK / 2];
    std::memcpy(qs, src + 4, sizeof qs);
    for (int j = 0; j < kQK / 2; ++j) {
      dst[j] = static_cast<float>(qs[j] & 0x0F) * d + m;
      dst[j + kQK / 2] = static_cast<float>(qs[j] >> 4) * d + m;
    }
  }
}

// block_q5_0: fp16 d, 4 bytes qh, 16 bytes of nibbles as in Q4_0; value =
// (q - 16) * d.
void dequantize_q5_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + 4 + kQK / 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK) {
    const float d = load_fp16(src);
    uint8_t q[kQK];
    five_bit_quants(src + 2, src + 6, q);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(q[j] - 16) * d;
  }
}

// block_q5_1: fp16 d, fp16 m, 4 bytes qh, 16 bytes of nibbles; value =
// q * d + m.
void dequantize_q5_1(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + 2 + 4 + kQK / 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK) {
    const float d = load_fp16(src);
    const float m = load_fp16(src + 2);
    uint8_t q[kQK];
    five_bit_quants(src + 4, src + 8, q);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(q[j]) * d + m;
  }
}

// block_q8_0: fp16 d, then 32 int8 values; value = q * d.
void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + kQK;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK) {
    const float d = load_fp16(src);
    int8_t qs[kQK];
    std::memcpy(qs, src + 2, sizeof qs);
    for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(qs[j]) * d;
  }
}

}  // namespace kvframe::runtime::gguf_detail
