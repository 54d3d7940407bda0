// fp16 and bf16 to fp32, bit-exact (subnormals, infinities, NaN payloads), and
// unaligned little-endian loads: tensor data in a GGUF file is only as aligned
// as general.alignment says, and a block's fields are packed.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace kvframe::runtime::gguf_detail {

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);  // GGUF is little-endian, like every host we build for
  return v;
}

inline float bits_to_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The reference conversion, used where F16C is absent and to check it.
inline float fp16_to_fp32_portable(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return bits_to_float(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return bits_to_float(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in fp32.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign != 0 ? -magnitude : magnitude;
}

inline float fp16_to_fp32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return fp16_to_fp32_portable(h);
#endif
}

inline float bf16_to_fp32(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

// The fp16 scale stored at p (a block's d or dmin).
inline float load_fp16(const uint8_t* p) { return fp16_to_fp32(load_u16(p)); }

}  // namespace kvframe::runtime::gguf_detail
