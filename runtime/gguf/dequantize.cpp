// dequantize(): dispatch on the CPU's instruction set (dequantize_simd.h),
// then on the type, to the kernels of dequantize_avx512.cpp,
// dequantize_avx2.cpp or the portable ones of dequantize_kernels.h.
#include <algorithm>
#include <cstring>
#include <limits>

#include "dequantize_kernels.h"
#include "dequantize_simd.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

namespace gguf_detail {

bool isa_supported(Isa isa) {
#if defined(__x86_64__)
  switch (isa) {
    case Isa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && isa_supported(Isa::kAvx2);
    case Isa::kAvx2:
#if defined(__clang__) && __clang_major__ < 16
      // Older clang knows no "f16c" feature string (the fuzz builds use
      // Debian's clang 14); every CPU with AVX2 and FMA has F16C as well.
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#endif
    case Isa::kPortable: return true;
  }
  return false;
#else
  return isa == Isa::kPortable;
#endif
}

Isa best_isa() {
  static const Isa best = isa_supported(Isa::kAvx512) ? Isa::kAvx512
                          : isa_supported(Isa::kAvx2) ? Isa::kAvx2
                                                      : Isa::kPortable;
  return best;
}

BlockKernel simd_kernel(Isa isa, GgmlType type) {
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) return avx512_kernel(type);
  if (isa == Isa::kAvx2) return avx2_kernel(type);
#else
  (void)type;
  (void)isa;
#endif
  return nullptr;
}

void dequantize_with(Isa isa, GgmlType type, const void* src, float* dst, int64_t n) {
  const auto* in = static_cast<const uint8_t*>(src);
  const int64_t n_blocks = n / std::max<int64_t>(ggml_type_size(type).block_size, 1);
  if (const BlockKernel kernel = simd_kernel(isa, type)) {
    kernel(in, dst, n_blocks);
    return;
  }
  switch (type) {
    case GgmlType::kF32: std::memcpy(dst, in, static_cast<std::size_t>(n) * sizeof(float)); return;
    case GgmlType::kF16: dequantize_f16(in, dst, n); return;
    case GgmlType::kBF16: dequantize_bf16(in, dst, n); return;
    case GgmlType::kQ4_0: dequantize_q4_0(in, dst, n_blocks); return;
    case GgmlType::kQ4_1: dequantize_q4_1(in, dst, n_blocks); return;
    case GgmlType::kQ5_0: dequantize_q5_0(in, dst, n_blocks); return;
    case GgmlType::kQ5_1: dequantize_q5_1(in, dst, n_blocks); return;
    case GgmlType::kQ8_0: dequantize_q8_0(in, dst, n_blocks); return;
    case GgmlType::kQ2_K: dequantize_q2_k(in, dst, n_blocks); return;
    case GgmlType::kQ3_K: dequantize_q3_k(in, dst, n_blocks); return;
    case GgmlType::kQ4_K: dequantize_q4_k(in, dst, n_blocks); return;
    case GgmlType::kQ5_K: dequantize_q5_k(in, dst, n_blocks); return;
    case GgmlType::kQ6_K: dequantize_q6_k(in, dst, n_blocks); return;
    default:
      // A caller that skipped dequantize_supported() gets NaNs it will notice,
      // not uninitialized memory.
      std::fill(dst, dst + n, std::numeric_limits<float>::quiet_NaN());
      return;
  }
}

}  // namespace gguf_detail

void dequantize(GgmlType type, const void* src, float* dst, int64_t n) {
  gguf_detail::dequantize_with(gguf_detail::best_isa(), type, src, dst, n);
}

Status dequantize_tensor(const GgufTensorInfo& tensor, float* dst) {
  if (!dequantize_supported(tensor.type)) {
    return Error{ErrorCode::kUnsupportedType,
                 "tensor '" + tensor.name + "' has type " + ggml_type_name(tensor.type) +
                     ", which kvframe cannot dequantize; use a model quantized as F32, F16, "
                     "BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K"};
  }
  dequantize(tensor.type, tensor.data, dst, tensor.n_elements());
  return {};
}

}  // namespace kvframe::runtime
