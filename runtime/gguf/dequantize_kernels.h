// Per-type dequantization kernels behind dequantize(): each turns n_blocks
// consecutive blocks at src into n_blocks * block_size floats at dst. Layouts
// and arithmetic follow ggml's reference dequantize_row_* (ggml-quants.c).
#pragma once

#include <cstdint>

namespace kvframe::runtime::gguf_detail {

void dequantize_f16(const uint8_t* src, float* dst, int64_t n);
void dequantize_bf16(const uint8_t* src, float* dst, int64_t n);
void dequantize_q4_0(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q4_1(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q5_0(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q5_1(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q8_0(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q2_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q3_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q4_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q5_k(const uint8_t* src, float* dst, int64_t n_blocks);
void dequantize_q6_k(const uint8_t* src, float* dst, int64_t n_blocks);

}  // namespace kvframe::runtime::gguf_detail
