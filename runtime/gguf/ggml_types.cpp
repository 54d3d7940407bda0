// Names and block sizes of the ggml tensor types GgmlType enumerates.
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

std::string ggml_type_name(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return "F32";
    case GgmlType::kF16: return "F16";
    case GgmlType::kQ4_0: return "Q4_0";
    case GgmlType::kQ4_1: return "Q4_1";
    case GgmlType::kQ5_0: return "Q5_0";
    case GgmlType::kQ5_1: return "Q5_1";
    case GgmlType::kQ8_0: return "Q8_0";
    case GgmlType::kQ8_1: return "Q8_1";
    case GgmlType::kQ2_K: return "Q2_K";
    case GgmlType::kQ3_K: return "Q3_K";
    case GgmlType::kQ4_K: return "Q4_K";
    case GgmlType::kQ5_K: return "Q5_K";
    case GgmlType::kQ6_K: return "Q6_K";
    case GgmlType::kQ8_K: return "Q8_K";
    case GgmlType::kBF16: return "BF16";
  }
  return "type " + std::to_string(static_cast<uint32_t>(type));
}

// Sizes are sizeof(block_*) in ggml-common.h. Every enumerated type can be
// sized, so a file holding e.g. Q8_K tensors still opens; only its loader
// refuses those tensors (dequantize_supported()).
GgmlTypeSize ggml_type_size(GgmlType type) {
  constexpr int64_t kQK = 32;    // elements per block of the legacy quants
  constexpr int64_t kQK_K = 256; // elements per K-quant super-block
  switch (type) {
    case GgmlType::kF32: return {1, 4};
    case GgmlType::kF16: return {1, 2};
    case GgmlType::kBF16: return {1, 2};
    case GgmlType::kQ4_0: return {kQK, 2 + 16};
    case GgmlType::kQ4_1: return {kQK, 2 + 2 + 16};
    case GgmlType::kQ5_0: return {kQK, 2 + 4 + 16};
    case GgmlType::kQ5_1: return {kQK, 2 + 2 + 4 + 16};
    case GgmlType::kQ8_0: return {kQK, 2 + 32};
    case GgmlType::kQ8_1: return {kQK, 2 + 2 + 32};
    case GgmlType::kQ2_K: return {kQK_K, 2 + 2 + 16 + 64};
    case GgmlType::kQ3_K: return {kQK_K, 2 + 32 + 64 + 12};
    case GgmlType::kQ4_K: return {kQK_K, 2 + 2 + 12 + 128};
    case GgmlType::kQ5_K: return {kQK_K, 2 + 2 + 12 + 32 + 128};
    case GgmlType::kQ6_K: return {kQK_K, 128 + 64 + 16 + 2};
    case GgmlType::kQ8_K: return {kQK_K, 4 + 256 + 32};
  }
  return {0, 0};
}

bool dequantize_supported(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kQ2_K:
    case GgmlType::kQ3_K:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
      return true;
    default:
      return false;
  }
}

}  // namespace kvframe::runtime
