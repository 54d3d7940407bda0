// Kernels of QuantMatrix::multiply (quant_matrix.h) for types that have one
// of their own beyond quant_matrix.cpp's 32-value blocks: the K-quants a
// Q4_K_M file is mostly made of (quant_kernels_kquants.cpp).
#pragma once

#include <cstdint>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime::quant_kernels {

// Rows [begin, end) of y[i, r] = x[i] . W[r] for the n rows of x [n, cols];
// row r of W at w + (order ? order[r] : r) * row_bytes.
using RowsFn = void (*)(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const float* x,
                        int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end);

// The AVX-512 kernel of `type` (Q4_K, Q6_K), or null: the caller then
// dequantizes a row at a time. Only for a CPU with AVX-512 (F, BW, VL, DQ).
RowsFn avx512_rows(GgmlType type);

}  // namespace kvframe::runtime::quant_kernels
