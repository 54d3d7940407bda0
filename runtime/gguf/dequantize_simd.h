// The instruction sets dequantize() dispatches between, and each one's
// kernels, so tests and benches can run every kernel this CPU supports.
// Every SIMD kernel gives the scalar one's result bit for bit: the same float
// operations (int to float, then multiply, then add or subtract, never fused)
// on the same values, per element.
#pragma once

#include <cstdint>
#include <cstring>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime::gguf_detail {

// kPortable is the scalar code of dequantize_legacy.cpp and
// dequantize_kquants.cpp, built for any CPU.
enum class Isa { kPortable, kAvx2, kAvx512 };

// Whether this CPU can run isa's kernels.
bool isa_supported(Isa isa);
// The fastest isa_supported() one, chosen once.
Isa best_isa();

// dequantize() on isa's kernels, which must be isa_supported(); types isa has
// no kernel for take the portable one.
void dequantize_with(Isa isa, GgmlType type, const void* src, float* dst, int64_t n);

// n_blocks consecutive blocks at src to floats at dst, as the per-type
// functions of dequantize_kernels.h.
using BlockKernel = void (*)(const uint8_t* src, float* dst, int64_t n_blocks);
// isa's kernel for type, nullptr where it has none (kPortable: always).
BlockKernel simd_kernel(Isa isa, GgmlType type);
BlockKernel avx512_kernel(GgmlType type);  // dequantize_avx512.cpp
BlockKernel avx2_kernel(GgmlType type);    // dequantize_avx2.cpp

// Q4_K and Q5_K's 8 six-bit scales and 8 six-bit mins (layout in
// dequantize_kquants.cpp) as 16 bytes, scales then mins, rearranged four at a
// time as ggml's AVX code does, so both ISAs can widen them in one go.
inline void unpack_k4_scales(const uint8_t* packed, uint8_t (&out)[16]) {
  constexpr uint32_t kLow6 = 0x3F3F3F3F, kLow4 = 0x0F0F0F0F, kLow2 = 0x03030303;
  uint32_t w[3];
  std::memcpy(w, packed, sizeof w);
  const uint32_t u[4] = {w[0] & kLow6, (w[2] & kLow4) | (((w[0] >> 6) & kLow2) << 4), w[1] & kLow6,
                         ((w[2] >> 4) & kLow4) | (((w[1] >> 6) & kLow2) << 4)};
  std::memcpy(out, u, sizeof u);
}

// Q3_K's 16 six-bit scales (layout in dequantize_kquants.cpp) as 16 bytes,
// still offset by 32.
inline void unpack_q3_k_scale_bytes(const uint8_t* packed, uint8_t (&out)[16]) {
  constexpr uint32_t kLow4 = 0x0F0F0F0F, kLow2 = 0x03030303;
  uint32_t w[3];
  std::memcpy(w, packed, sizeof w);
  const uint32_t u[4] = {(w[0] & kLow4) | ((w[2] & kLow2) << 4), (w[1] & kLow4) | (((w[2] >> 2) & kLow2) << 4),
                         ((w[0] >> 4) & kLow4) | (((w[2] >> 4) & kLow2) << 4),
                         ((w[1] >> 4) & kLow4) | (((w[2] >> 6) & kLow2) << 4)};
  std::memcpy(out, u, sizeof u);
}

}  // namespace kvframe::runtime::gguf_detail
