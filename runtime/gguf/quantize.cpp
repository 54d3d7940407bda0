// quantize(): fp32 to GGML's 32-element block formats, rounding as ggml's
// reference quantize_row_*_ref does, so a file written here reads back as one
// written by ggml would.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_gguf/gguf_writer.h"

namespace kvframe::runtime {
namespace {

constexpr int kQK = 32;

void put_fp16(uint8_t* dst, float v) {
  const uint16_t h = fp32_to_fp16(v);
  std::memcpy(dst, &h, sizeof h);
}

// d = amax / 127, q = round(x / d).
void quantize_q8_0(const float* x, uint8_t* dst) {
  float amax = 0;
  for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  put_fp16(dst, d);
  for (int j = 0; j < kQK; ++j) dst[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[j] * id)));
}

// d = (the value of largest magnitude) / -8, q = x / d + 8 in 0..15.
void quantize_q4_0(const float* x, uint8_t* dst) {
  float amax = 0, max = 0;
  for (int j = 0; j < kQK; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  put_fp16(dst, d);
  for (int j = 0; j < kQK / 2; ++j) {
    const auto lo = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f))));
    const auto hi = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x[j + kQK / 2] * id + 8.5f))));
    dst[2 + j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// d = (max - min) / 15, m = min, q = (x - min) / d in 0..15.
void quantize_q4_1(const float* x, uint8_t* dst) {
  const auto [lo_it, hi_it] = std::minmax_element(x, x + kQK);
  const float min = *lo_it, max = *hi_it;
  const float d = (max - min) / 15.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  put_fp16(dst, d);
  put_fp16(dst + 2, min);
  for (int j = 0; j < kQK / 2; ++j) {
    const auto lo = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>((x[j] - min) * id + 0.5f))));
    const auto hi = static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>((x[j + kQK / 2] - min) * id + 0.5f))));
    dst[4 + j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

}  // namespace

bool quantize_supported(GgmlType type) {
  return type == GgmlType::kQ8_0 || type == GgmlType::kQ4_0 || type == GgmlType::kQ4_1;
}

void quantize(GgmlType type, const float* src, uint8_t* dst, int64_t n) {
  const int64_t bytes = ggml_type_size(type).block_bytes;
  for (int64_t b = 0; b < n / kQK; ++b, src += kQK, dst += bytes) {
    switch (type) {
      case GgmlType::kQ8_0: quantize_q8_0(src, dst); break;
      case GgmlType::kQ4_0: quantize_q4_0(src, dst); break;
      case GgmlType::kQ4_1: quantize_q4_1(src, dst); break;
      default: return;
    }
  }
}

}  // namespace kvframe::runtime
