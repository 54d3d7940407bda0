#include "quant_matrix.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kvframe/runtime_gguf/gguf_writer.h"  // fp32_to_bf16


#if defined(__x86_64__)
#include <immintrin.h>
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps() and then warn
// that it may be used uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace kvframe::runtime {
namespace {

constexpr int64_t kQK = QuantMatrix::kBlock;

int64_t block_bytes(BlockFormat format) {
  switch (format) {
    case BlockFormat::kQ4_0: return 2 + kQK / 2;      // fp16 d, 16 bytes of nibbles
    case BlockFormat::kQ4_1: return 2 + 2 + kQK / 2;  // fp16 d, fp16 m, nibbles
    case BlockFormat::kQ8_0: return 2 + kQK;          // fp16 d, 32 int8
    case BlockFormat::kF32: return 4 * kQK;
    case BlockFormat::kF16:
    case BlockFormat::kBF16: return 2 * kQK;
  }
  return 0;
}

std::optional<BlockFormat> block_format_of(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return BlockFormat::kQ4_0;
    case GgmlType::kQ4_1: return BlockFormat::kQ4_1;
    case GgmlType::kQ8_0: return BlockFormat::kQ8_0;
    case GgmlType::kF32: return BlockFormat::kF32;
    case GgmlType::kF16: return BlockFormat::kF16;
    case GgmlType::kBF16: return BlockFormat::kBF16;
    default: return std::nullopt;
  }
}

// Rows [begin, end) of y[i, r] = x[i] . W[r] for i < n, one kernel per
// instruction set. Activation rows are taken four at a time so each weight
// block is dequantized once per four rows.
using RowsKernel = void (*)(BlockFormat, const uint8_t* w, int64_t row_bytes, int64_t cols, const float* x, int64_t n,
                            float* y, int64_t y_stride, int64_t begin, int64_t end);

void rows_portable(BlockFormat format, const uint8_t* w, int64_t row_bytes, int64_t cols, const float* x, int64_t n,
                   float* y, int64_t y_stride, int64_t begin, int64_t end) {
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = begin; r < end; ++r) {
    dequantize(ggml_type_of(format), w + r * row_bytes, row.data(), cols);
    for (int64_t i = 0; i < n; ++i) {
      const float* xi = x + i * cols;
      float sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += row[static_cast<size_t>(c)] * xi[c];
      y[i * y_stride + r] = sum;
    }
  }
}

#if defined(__x86_64__)
#define KV_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma,f16c")))
#define KV_AVX2 __attribute__((target("avx2,fma,f16c")))

float fp16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, sizeof h);
  return _cvtsh_ss(h);
}

// One block as 32 floats in two registers: elements 0..15 and 16..31.
template <BlockFormat F>
KV_AVX512 inline void block_avx512(const uint8_t* b, __m512& lo, __m512& hi) {
  if constexpr (F == BlockFormat::kF32) {
    lo = _mm512_loadu_ps(reinterpret_cast<const float*>(b));
    hi = _mm512_loadu_ps(reinterpret_cast<const float*>(b) + 16);
    return;
  } else if constexpr (F == BlockFormat::kF16) {
    lo = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
    hi = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32)));
    return;
  } else if constexpr (F == BlockFormat::kBF16) {  // bf16 is the top half of an fp32
    lo = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b))), 16));
    hi = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32))), 16));
    return;
  }
  const __m512 d = _mm512_set1_ps(fp16_at(b));
  if constexpr (F == BlockFormat::kQ8_0) {
    lo = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2)))), d);
    hi = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 18)))), d);
  } else {
    // Low nibbles are elements 0..15, high nibbles 16..31.
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (F == BlockFormat::kQ4_1 ? 4 : 2)));
    const __m128i mask = _mm_set1_epi8(0x0F);
    const __m512 l = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(q, mask)));
    const __m512 h = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(q, 4), mask)));
    // Q4_0: (q - 8) d, exactly as ggml (8 d is exact); Q4_1: q d + m.
    const __m512 offset = F == BlockFormat::kQ4_1 ? _mm512_set1_ps(fp16_at(b + 2)) : _mm512_mul_ps(d, _mm512_set1_ps(-8.0f));
    lo = _mm512_fmadd_ps(l, d, offset);
    hi = _mm512_fmadd_ps(h, d, offset);
  }
}

template <BlockFormat F>
KV_AVX512 void rows_avx512_of(const uint8_t* w, int64_t row_bytes, int64_t cols, const float* x, int64_t n, float* y,
                              int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kTile = 4;
  const int64_t blocks = cols / kQK, bytes = block_bytes(F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + r * row_bytes;
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t tile = std::min(kTile, n - i0);
      // Two accumulators per activation row (elements 0..15, 16..31): two
      // independent FMA chains hide the FMA latency when n is 1.
      __m512 acc_lo[kTile], acc_hi[kTile];
      for (int64_t i = 0; i < kTile; ++i) acc_lo[i] = acc_hi[i] = _mm512_setzero_ps();
      for (int64_t b = 0; b < blocks; ++b) {
        __m512 lo, hi;
        block_avx512<F>(row + b * bytes, lo, hi);
        for (int64_t i = 0; i < tile; ++i) {
          const float* xb = x + (i0 + i) * cols + b * kQK;
          acc_lo[i] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(xb), acc_lo[i]);
          acc_hi[i] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(xb + 16), acc_hi[i]);
        }
      }
      for (int64_t i = 0; i < tile; ++i) y[(i0 + i) * y_stride + r] = _mm512_reduce_add_ps(_mm512_add_ps(acc_lo[i], acc_hi[i]));
    }
  }
}

// The AVX2 twin: the same block in four 8-float registers.
template <BlockFormat F>
KV_AVX2 inline void block_avx2(const uint8_t* b, __m256 (&out)[4]) {
  if constexpr (F == BlockFormat::kF32) {
    for (int k = 0; k < 4; ++k) out[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(b) + 8 * k);
    return;
  } else if constexpr (F == BlockFormat::kF16) {
    for (int k = 0; k < 4; ++k) out[k] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * k)));
    return;
  } else if constexpr (F == BlockFormat::kBF16) {
    for (int k = 0; k < 4; ++k) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 16 * k));
      out[k] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    return;
  }
  const __m256 d = _mm256_set1_ps(fp16_at(b));
  if constexpr (F == BlockFormat::kQ8_0) {
    for (int k = 0; k < 4; ++k) {
      const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + 8 * k));
      out[k] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d);
    }
  } else {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + (F == BlockFormat::kQ4_1 ? 4 : 2)));
    const __m128i mask = _mm_set1_epi8(0x0F);
    const __m128i l = _mm_and_si128(q, mask), h = _mm_and_si128(_mm_srli_epi16(q, 4), mask);
    const __m256 offset = F == BlockFormat::kQ4_1 ? _mm256_set1_ps(fp16_at(b + 2)) : _mm256_mul_ps(d, _mm256_set1_ps(-8.0f));
    const __m128i parts[4] = {l, _mm_srli_si128(l, 8), h, _mm_srli_si128(h, 8)};
    for (int k = 0; k < 4; ++k) out[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(parts[k])), d, offset);
  }
}

KV_AVX2 inline float reduce_add(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <BlockFormat F>
KV_AVX2 void rows_avx2_of(const uint8_t* w, int64_t row_bytes, int64_t cols, const float* x, int64_t n, float* y,
                          int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kTile = 2;
  const int64_t blocks = cols / kQK, bytes = block_bytes(F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = w + r * row_bytes;
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const int64_t tile = std::min(kTile, n - i0);
      __m256 acc[kTile][2];
      for (auto& a : acc) a[0] = a[1] = _mm256_setzero_ps();
      for (int64_t b = 0; b < blocks; ++b) {
        __m256 wb[4];
        block_avx2<F>(row + b * bytes, wb);
        for (int64_t i = 0; i < tile; ++i) {
          const float* xb = x + (i0 + i) * cols + b * kQK;
          acc[i][0] = _mm256_fmadd_ps(wb[0], _mm256_loadu_ps(xb), acc[i][0]);
          acc[i][1] = _mm256_fmadd_ps(wb[1], _mm256_loadu_ps(xb + 8), acc[i][1]);
          acc[i][0] = _mm256_fmadd_ps(wb[2], _mm256_loadu_ps(xb + 16), acc[i][0]);
          acc[i][1] = _mm256_fmadd_ps(wb[3], _mm256_loadu_ps(xb + 24), acc[i][1]);
        }
      }
      for (int64_t i = 0; i < tile; ++i) y[(i0 + i) * y_stride + r] = reduce_add(_mm256_add_ps(acc[i][0], acc[i][1]));
    }
  }
}

// Calls fn with the format as a compile-time constant (the kernels are templates on it).
template <typename Fn>
void with_format(BlockFormat format, Fn&& fn) {
  using F = BlockFormat;
  switch (format) {
    case F::kQ4_0: return fn(std::integral_constant<F, F::kQ4_0>{});
    case F::kQ4_1: return fn(std::integral_constant<F, F::kQ4_1>{});
    case F::kQ8_0: return fn(std::integral_constant<F, F::kQ8_0>{});
    case F::kF32: return fn(std::integral_constant<F, F::kF32>{});
    case F::kF16: return fn(std::integral_constant<F, F::kF16>{});
    case F::kBF16: return fn(std::integral_constant<F, F::kBF16>{});
  }
}

void rows_avx512(BlockFormat format, const uint8_t* w, int64_t row_bytes, int64_t cols, const float* x, int64_t n,
                 float* y, int64_t y_stride, int64_t begin, int64_t end) {
  with_format(format, [&](auto f) { rows_avx512_of<decltype(f)::value>(w, row_bytes, cols, x, n, y, y_stride, begin, end); });
}

void rows_avx2(BlockFormat format, const uint8_t* w, int64_t row_bytes, int64_t cols, const float* x, int64_t n,
               float* y, int64_t y_stride, int64_t begin, int64_t end) {
  with_format(format, [&](auto f) { rows_avx2_of<decltype(f)::value>(w, row_bytes, cols, x, n, y, y_stride, begin, end); });
}
#endif  // __x86_64__

bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx2() {
#if defined(__x86_64__)
#if defined(__clang__) && __clang_major__ < 16
  // Older clang knows no "f16c" feature string (the fuzz builds use
  // Debian's clang 14); every CPU with AVX2 and FMA has F16C as well.
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#endif
  return has;
#else
  return false;
#endif
}

}  // namespace

GgmlType ggml_type_of(BlockFormat format) {
  switch (format) {
    case BlockFormat::kQ4_0: return GgmlType::kQ4_0;
    case BlockFormat::kQ4_1: return GgmlType::kQ4_1;
    case BlockFormat::kQ8_0: return GgmlType::kQ8_0;
    case BlockFormat::kF32: return GgmlType::kF32;
    case BlockFormat::kF16: return GgmlType::kF16;
    case BlockFormat::kBF16: return GgmlType::kBF16;
  }
  return GgmlType::kQ8_0;
}

QuantMatrix::QuantMatrix(BlockFormat format, int64_t rows, int64_t cols)
    : format_(format), rows_(rows), cols_(cols), data_(static_cast<size_t>(rows * (cols / kQK) * block_bytes(format))) {}

int64_t QuantMatrix::row_bytes() const { return cols_ / kQK * block_bytes(format_); }

std::optional<QuantMatrix> QuantMatrix::from_tensor(const GgufTensorInfo& tensor) {
  if (tensor.dims.empty() || tensor.dims[0] % kQK != 0 || !dequantize_supported(tensor.type)) return std::nullopt;
  const int64_t cols = tensor.dims[0], rows = tensor.n_elements() / cols;
  if (auto format = block_format_of(tensor.type)) {
    QuantMatrix m(*format, rows, cols);
    std::memcpy(m.data_.data(), tensor.data, m.data_.size());
    return m;
  }
  // Row by row: a whole 8B-model embedding in fp32 would take gigabytes.
  const GgmlTypeSize source = ggml_type_size(tensor.type);
  if (source.block_size <= 0 || cols % source.block_size != 0) return std::nullopt;
  const int64_t source_row_bytes = cols / source.block_size * source.block_bytes;
  return converted(BlockFormat::kQ8_0, rows, cols, [&](int64_t r, float* out) {
    dequantize(tensor.type, tensor.data + r * source_row_bytes, out, cols);
  });
}

QuantMatrix QuantMatrix::converted(BlockFormat format, int64_t rows, int64_t cols,
                                   const std::function<void(int64_t, float*)>& row_values) {
  QuantMatrix m(format, rows, cols);
  const int64_t bytes = m.row_bytes();
  at::parallel_for(0, rows, 64, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = begin; r < end; ++r) {
      row_values(r, row.data());
      uint8_t* out = m.data_.data() + r * bytes;
      if (format == BlockFormat::kQ8_0) {
        quantize(GgmlType::kQ8_0, row.data(), out, cols);
      } else if (format == BlockFormat::kBF16) {
        for (int64_t c = 0; c < cols; ++c) {
          const uint16_t h = fp32_to_bf16(row[static_cast<size_t>(c)]);
          std::memcpy(out + 2 * c, &h, sizeof h);
        }
      } else {  // F32
        std::memcpy(out, row.data(), static_cast<size_t>(bytes));
      }
    }
  });
  return m;
}

QuantMatrix QuantMatrix::of_floats(const float* values, int64_t rows, int64_t cols, BlockFormat format) {
  return converted(format, rows, cols, [&](int64_t r, float* out) { std::copy_n(values + r * cols, cols, out); });
}

QuantMatrix QuantMatrix::stack(const std::vector<QuantMatrix>& parts) {
  const BlockFormat format = parts.front().format_;
  const bool same = std::all_of(parts.begin(), parts.end(), [&](const QuantMatrix& p) { return p.format_ == format; });
  if (!same) {  // to F32 where a part is a float type (exact), else to Q8_0
    const bool any_float = std::any_of(parts.begin(), parts.end(), [](const QuantMatrix& p) {
      return p.format_ == BlockFormat::kF32 || p.format_ == BlockFormat::kF16 || p.format_ == BlockFormat::kBF16;
    });
    std::vector<QuantMatrix> alike;
    for (const QuantMatrix& p : parts) {
      alike.push_back(converted(any_float ? BlockFormat::kF32 : BlockFormat::kQ8_0, p.rows_, p.cols_,
                                [&](int64_t r, float* out) { p.dequantize_row(r, out); }));
    }
    return stack(alike);
  }
  int64_t rows = 0;
  for (const QuantMatrix& p : parts) rows += p.rows_;
  QuantMatrix m(format, rows, parts.front().cols_);
  uint8_t* out = m.data_.data();
  for (const QuantMatrix& p : parts) out = std::copy(p.data_.begin(), p.data_.end(), out);
  return m;
}

QuantMatrix QuantMatrix::reorder_rows(const std::vector<int64_t>& order) const {
  QuantMatrix m(format_, static_cast<int64_t>(order.size()), cols_);
  const int64_t bytes = row_bytes();
  for (size_t r = 0; r < order.size(); ++r) std::memcpy(m.data_.data() + static_cast<int64_t>(r) * bytes, row(order[r]), static_cast<size_t>(bytes));
  return m;
}

void QuantMatrix::dequantize_row(int64_t r, float* out) const { dequantize(ggml_type_of(format_), row(r), out, cols_); }

bool QuantMatrix::supported(Kernel kernel) {
  switch (kernel) {
    case Kernel::kAvx512: return cpu_has_avx512();
    case Kernel::kAvx2: return cpu_has_avx2();
    case Kernel::kBest:
    case Kernel::kPortable: return true;
  }
  return false;
}

void QuantMatrix::multiply(const float* x, int64_t n, float* y, Kernel kernel) const {
  RowsKernel rows_kernel = rows_portable;
#if defined(__x86_64__)
  if (kernel == Kernel::kBest || !supported(kernel)) {
    kernel = cpu_has_avx512() ? Kernel::kAvx512 : cpu_has_avx2() ? Kernel::kAvx2 : Kernel::kPortable;
  }
  if (kernel == Kernel::kAvx512) rows_kernel = rows_avx512;
  if (kernel == Kernel::kAvx2) rows_kernel = rows_avx2;
#endif
  // Enough rows per task that a task reads a few tens of KB of weights:
  // fewer, larger tasks cost less to hand out than the bandwidth they split.
  const int64_t grain = std::max<int64_t>(16, 32768 / std::max<int64_t>(1, row_bytes()));
  const uint8_t* w = data_.data();
  const int64_t bytes = row_bytes();
  at::parallel_for(0, rows_, grain, [&](int64_t begin, int64_t end) {
    rows_kernel(format_, w, bytes, cols_, x, n, y, rows_, begin, end);
  });
}

}  // namespace kvframe::runtime
