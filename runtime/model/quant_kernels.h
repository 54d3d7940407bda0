// Kernels of QuantMatrix::multiply (quant_matrix.h) for types that have one
// of their own beyond quant_matrix.cpp's 32-value blocks: the K-quants a
// Q4_K_M file is mostly made of (quant_kernels_kquants.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime::quant_kernels {

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
// Whether this CPU runs the int8 kernels (AVX-512 F, BW, VL, DQ).
bool int8_supported();
// x [n, cols] (cols a multiple of 256) into out; only where int8_supported().
void quantize_rows(const float* x, int64_t n, int64_t cols, Int8Rows& out);
using Int8RowsFn = void (*)(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                            const Int8Rows& x, float* y, int64_t y_stride, int64_t begin, int64_t end);
// The int8 kernel of `type` (Q4_K, Q6_K), or null (another type, or a CPU
// without AVX-512): the caller then multiplies fp32 activations.
Int8RowsFn int8_rows(GgmlType type);

}  // namespace kvframe::runtime::quant_kernels
