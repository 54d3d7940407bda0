// dequantize(): dispatch to the per-type kernels in dequantize_kernels.h.
#include <algorithm>
#include <cstring>
#include <limits>

#include "dequantize_kernels.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

void dequantize(GgmlType type, const void* src, float* dst, int64_t n) {
  namespace d = gguf_detail;
  const auto* in = static_cast<const uint8_t*>(src);
  const int64_t n_blocks = n / std::max<int64_t>(ggml_type_size(type).block_size, 1);
  switch (type) {
    case GgmlType::kF32: std::memcpy(dst, in, static_cast<std::size_t>(n) * sizeof(float)); return;
    case GgmlType::kF16: d::dequantize_f16(in, dst, n); return;
    case GgmlType::kBF16: d::dequantize_bf16(in, dst, n); return;
    case GgmlType::kQ4_0: d::dequantize_q4_0(in, dst, n_blocks); return;
    case GgmlType::kQ4_1: d::dequantize_q4_1(in, dst, n_blocks); return;
    case GgmlType::kQ5_0: d::dequantize_q5_0(in, dst, n_blocks); return;
    case GgmlType::kQ5_1: d::dequantize_q5_1(in, dst, n_blocks); return;
    case GgmlType::kQ8_0: d::dequantize_q8_0(in, dst, n_blocks); return;
    case GgmlType::kQ2_K: d::dequantize_q2_k(in, dst, n_blocks); return;
    case GgmlType::kQ3_K: d::dequantize_q3_k(in, dst, n_blocks); return;
    case GgmlType::kQ4_K: d::dequantize_q4_k(in, dst, n_blocks); return;
    case GgmlType::kQ5_K: d::dequantize_q5_k(in, dst, n_blocks); return;
    case GgmlType::kQ6_K: d::dequantize_q6_k(in, dst, n_blocks); return;
    default:
      // A caller that skipped dequantize_supported() gets NaNs it will notice,
      // not uninitialized memory.
      std::fill(dst, dst + n, std::numeric_limits<float>::quiet_NaN());
      return;
  }
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
