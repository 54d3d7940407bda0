// K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K): super-blocks of 256 elements,
// split into sub-blocks that each carry their own scale (and min). Layouts from ggml-common.h. As in
// dequantize_legacy.cpp, quants are copied to local arrays first so the
// compiler knows they do not alias the output and vectorizes the loops.
#include <cstring>

#include "dequantize_kernels.h"
#include "half.h"

namespace kvframe::runtime::gguf_detail {
namespace {

constexpr int kQK_K = 256;  // elements per super-block

// Q4_K and Q5_K pack 8 six-bit scales and 8 six-bit mins into 12 bytes:
// bytes 0-3 hold scales 0-3 (low 6 bits) and the top 2 bits of scales 4-7,
// bytes 4-7 the same for the mins, bytes 8-11 the low 4 bits of scales 4-7
// (low nibble) and mins 4-7 (high nibble). ggml's get_scale_min_k4.
struct ScaleMin {
  uint8_t scale;
  uint8_t min;
};
inline ScaleMin scale_min_k4(int j, const uint8_t* q) {
  if (j < 4) return {static_cast<uint8_t>(q[j] & 63), static_cast<uint8_t>(q[j + 4] & 63)};
  return {static_cast<uint8_t>((q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4)),
          static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4))};
}

// Q2_K and Q3_K pack 2-bit quants four to a byte: each half of 128 elements
// takes 32 bytes, element 32 * j + l of the half (j = 0..3, l = 0..31) in bits
// 2j and 2j + 1 of byte l (ggml's (q[l] >> shift) & 3). Unpacked here into
// element order, where every 16 consecutive elements share one scale.
inline void unpack_2bit(const uint8_t* src, int8_t (&q)[kQK_K]) {
  uint8_t qs[kQK_K / 4];
  std::memcpy(qs, src, sizeof qs);
  for (int half = 0; half < 2; ++half) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) {
        q[128 * half + 32 * j + l] = static_cast<int8_t>((qs[32 * half + l] >> (2 * j)) & 3);
      }
    }
  }
}

// The last step of Q2_K and Q3_K: value = scale * q - min, with one scale
// and min per 16 elements, multiplied and subtracted in ggml's order. Q3_K
// has no mins and passes zeros: x - 0.0f is x, bit for bit (-0 included).
inline void scale_groups_of_16(const float (&scale)[16], const float (&min)[16],
                               const int8_t (&q)[kQK_K], float* dst) {
  for (int group = 0; group < 16; ++group, dst += 16) {
    for (int l = 0; l < 16; ++l) {
      dst[l] = scale[group] * static_cast<float>(q[16 * group + l]) - min[group];
    }
  }
}

// Q3_K's 16 six-bit scales in 12 bytes: the low 4 bits of scale k are the low
// (k < 8) or high (k >= 8) nibble of byte k % 8, its top 2 bits are bits
// 2 * (k / 4) and up of byte 8 + k % 4. ggml unpacks them with kmask1/kmask2.
inline void unpack_q3_k_scales(const uint8_t* src, int8_t (&scales)[16]) {
  uint8_t sc[12];
  std::memcpy(sc, src, sizeof sc);
  for (int k = 0; k < 16; ++k) {
    const int low = k < 8 ? sc[k] & 0x0F : sc[k - 8] >> 4;
    const int high = (sc[8 + k % 4] >> (2 * (k / 4))) & 3;
    scales[k] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

}  // namespace

// block_q2_K: 16 bytes of scales (low nibble: scale, high nibble: min, one
// pair per 16 elements), 64 bytes of 2-bit quants, fp16 d, fp16 dmin; value =
// d * scale * q - dmin * min.
void dequantize_q2_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = kQK_K / 16 + kQK_K / 4 + 2 + 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK_K) {
    const float d = load_fp16(src + 80);
    const float dmin = load_fp16(src + 82);
    float scale[16], min[16];
    for (int group = 0; group < 16; ++group) {
      scale[group] = d * static_cast<float>(src[group] & 0x0F);
      min[group] = dmin * static_cast<float>(src[group] >> 4);
    }
    int8_t q[kQK_K];
    unpack_2bit(src + 16, q);
    scale_groups_of_16(scale, min, q, dst);
  }
}

// block_q3_K: 32 bytes hmask, 64 bytes of 2-bit quants, 12 bytes of 6-bit
// scales, fp16 d. Element 32 * k + l takes its third bit from bit k of
// hmask[l]; that bit set means q = low bits, clear means low bits - 4. value
// = d * (scale - 32) * q, one scale per 16 elements.
void dequantize_q3_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = kQK_K / 8 + kQK_K / 4 + 12 + 2;
  static constexpr float kNoMins[16] = {};
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes, dst += kQK_K) {
    const float d = load_fp16(src + 108);
    int8_t scales[16];
    unpack_q3_k_scales(src + 96, scales);
    float scale[16];
    for (int group = 0; group < 16; ++group) scale[group] = d * static_cast<float>(scales[group]);
    uint8_t hmask[kQK_K / 8];
    std::memcpy(hmask, src, sizeof hmask);
    int8_t q[kQK_K];
    unpack_2bit(src + 32, q);
    for (int k = 0; k < 8; ++k) {
      for (int l = 0; l < 32; ++l) {
        q[32 * k + l] = static_cast<int8_t>(q[32 * k + l] + (((hmask[l] >> k) & 1) << 2) - 4);
      }
    }
    scale_groups_of_16(scale, kNoMins, q, dst);
  }
}

// block_q4_K: fp16 d, fp16 dmin, 12 bytes of scales/mins, 128 bytes of
// nibbles. Each 32 bytes of nibbles hold two 32-element sub-blocks (low
// nibbles first); value = d * scale * q - dmin * min.
void dequantize_q4_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + 2 + 12 + kQK_K / 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes) {
    const float d = load_fp16(src);
    const float dmin = load_fp16(src + 2);
    const uint8_t* scales = src + 4;
    uint8_t qs[kQK_K / 2];
    std::memcpy(qs, src + 16, sizeof qs);
    const uint8_t* q = qs;
    for (int sub = 0; sub < 8; sub += 2, q += 32, dst += 64) {
      const ScaleMin lo = scale_min_k4(sub, scales);
      const ScaleMin hi = scale_min_k4(sub + 1, scales);
      const float d1 = d * static_cast<float>(lo.scale), m1 = dmin * static_cast<float>(lo.min);
      const float d2 = d * static_cast<float>(hi.scale), m2 = dmin * static_cast<float>(hi.min);
      for (int l = 0; l < 32; ++l) dst[l] = d1 * static_cast<float>(q[l] & 0x0F) - m1;
      for (int l = 0; l < 32; ++l) dst[l + 32] = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

// block_q5_K: as Q4_K plus 32 bytes qh giving each element a fifth bit: bit
// 2k of qh[l] for the low-nibble sub-block k, bit 2k+1 for the high one.
void dequantize_q5_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = 2 + 2 + 12 + kQK_K / 8 + kQK_K / 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes) {
    const float d = load_fp16(src);
    const float dmin = load_fp16(src + 2);
    const uint8_t* scales = src + 4;
    uint8_t qh[kQK_K / 8];
    uint8_t qs[kQK_K / 2];
    std::memcpy(qh, src + 16, sizeof qh);
    std::memcpy(qs, src + 48, sizeof qs);
    const uint8_t* ql = qs;
    for (int sub = 0; sub < 8; sub += 2, ql += 32, dst += 64) {
      const ScaleMin lo = scale_min_k4(sub, scales);
      const ScaleMin hi = scale_min_k4(sub + 1, scales);
      const float d1 = d * static_cast<float>(lo.scale), m1 = dmin * static_cast<float>(lo.min);
      const float d2 = d * static_cast<float>(hi.scale), m2 = dmin * static_cast<float>(hi.min);
      for (int l = 0; l < 32; ++l) {
        const int q = (ql[l] & 0x0F) | (((qh[l] >> sub) & 1) << 4);
        dst[l] = d1 * static_cast<float>(q) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int q = (ql[l] >> 4) | (((qh[l] >> (sub + 1)) & 1) << 4);
        dst[l + 32] = d2 * static_cast<float>(q) - m2;
      }
    }
  }
}

// block_q6_K: 128 bytes ql (low 4 bits), 64 bytes qh (high 2 bits), 16 int8
// scales (one per 16 elements), fp16 d. Each half of 128 elements uses 64
// bytes of ql and 32 of qh, in four interleaved runs of 32 elements; value =
// d * scale * (q - 32), multiplied in that order as ggml does.
void dequantize_q6_k(const uint8_t* src, float* dst, int64_t n_blocks) {
  constexpr int kBytes = kQK_K / 2 + kQK_K / 4 + kQK_K / 16 + 2;
  for (int64_t b = 0; b < n_blocks; ++b, src += kBytes) {
    uint8_t ql_all[kQK_K / 2];
    uint8_t qh_all[kQK_K / 4];
    int8_t scales[kQK_K / 16];
    std::memcpy(ql_all, src, sizeof ql_all);
    std::memcpy(qh_all, src + 128, sizeof qh_all);
    std::memcpy(scales, src + 192, sizeof scales);
    const float d = load_fp16(src + 208);
    for (int half = 0; half < 2; ++half, dst += 128) {
      const uint8_t* ql = ql_all + 64 * half;
      const uint8_t* qh = qh_all + 32 * half;
      const int8_t* sc = scales + 8 * half;
      for (int group = 0; group < 2; ++group) {  // 16 elements per scale
        const float d1 = d * static_cast<float>(sc[group]);
        const float d2 = d * static_cast<float>(sc[group + 2]);
        const float d3 = d * static_cast<float>(sc[group + 4]);
        const float d4 = d * static_cast<float>(sc[group + 6]);
        for (int l = 16 * group; l < 16 * group + 16; ++l) {
          const int q1 = ((ql[l] & 0x0F) | (((qh[l] >> 0) & 3) << 4)) - 32;
          const int q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) - 32;
          const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          dst[l] = d1 * static_cast<float>(q1);
          dst[l + 32] = d2 * static_cast<float>(q2);
          dst[l + 64] = d3 * static_cast<float>(q3);
          dst[l + 96] = d4 * static_cast<float>(q4);
        }
      }
    }
  }
}

}  // namespace kvframe::runtime::gguf_detail
