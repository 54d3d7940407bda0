#include "quant_matrix.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kvframe/runtime_gguf/gguf_writer.h"  // fp32_to_bf16
#include "quant_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kvframe::runtime {
namespace {

constexpr int64_t kQK = QuantMatrix::kBlock;

using quant_kernels::cpu_has_avx2;
using quant_kernels::cpu_has_avx512;
using quant_kernels::cpu_has_avx512_bf16;
#if defined(__x86_64__)
using quant_kernels::fp16_at;
using quant_kernels::bf16x16_to_ps;
#endif

// The types with kernels of their own, which dequantize a 32-element block
// in registers; every other type is dequantized a row at a time.
enum class BlockFormat : uint8_t { kQ4_0, kQ4_1, kQ8_0, kF32, kF16, kBF16 };

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

// Rows [begin, end) of y[i, r] = x[i] . W[r] for i < n, one kernel per
// instruction set; row r of W is at w + (order ? order[r] : r) * row_bytes
// and y already points at the part's first column. Activation rows are taken
// four at a time so each weight block is dequantized once per four rows.
using RowsKernel = void (*)(BlockFormat, const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                            const float* x, int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end);

inline const uint8_t* row_at(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t r) {
  return w + (order ? order[r] : r) * row_bytes;
}

void rows_portable(BlockFormat format, const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                   const float* x, int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = begin; r < end; ++r) {
    dequantize(ggml_type_of(format), row_at(w, row_bytes, order, r), row.data(), cols);
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
  } else if constexpr (F == BlockFormat::kBF16) {
    lo = bf16x16_to_ps(b);
    hi = bf16x16_to_ps(b + 32);
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
KV_AVX512 void rows_avx512_of(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const float* x,
                              int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kTile = 4;
  const int64_t blocks = cols / kQK, bytes = block_bytes(F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = row_at(w, row_bytes, order, r);
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

template <BlockFormat F>
KV_AVX2 void rows_avx2_of(const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols, const float* x,
                          int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  constexpr int64_t kTile = 2;
  const int64_t blocks = cols / kQK, bytes = block_bytes(F);
  for (int64_t r = begin; r < end; ++r) {
    const uint8_t* row = row_at(w, row_bytes, order, r);
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
      for (int64_t i = 0; i < tile; ++i) y[(i0 + i) * y_stride + r] = quant_kernels::reduce_add_avx2(_mm256_add_ps(acc[i][0], acc[i][1]));
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

// A row of 32-value blocks straight to bf16: each block expanded in
// registers, as the step kernels do, and rounded by AVX-512-BF16's
// VCVTNE2PS2BF16 (ties to even, as libtorch; it flushes denormal inputs,
// which a quantized block's d * q never is: the float formats go the
// general way). No fp32 row is written: dequantizing is a tile's cost.
template <BlockFormat F>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma,f16c")))
void row_to_bf16_of(const uint8_t* row, int64_t cols, uint16_t* out) {
  const int64_t blocks = cols / kQK, bytes = block_bytes(F);
  for (int64_t b = 0; b < blocks; ++b) {
    __m512 lo, hi;
    block_avx512<F>(row + b * bytes, lo, hi);
    _mm512_storeu_si512(out + b * kQK, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo)));
  }
}

// Whether row_to_bf16() takes `format` on this CPU.
bool bf16_rows_supported(BlockFormat format) {
  return cpu_has_avx512_bf16() &&
         (format == BlockFormat::kQ4_0 || format == BlockFormat::kQ4_1 || format == BlockFormat::kQ8_0);
}

void row_to_bf16(BlockFormat format, const uint8_t* row, int64_t cols, uint16_t* out) {
  with_format(format, [&](auto f) { row_to_bf16_of<decltype(f)::value>(row, cols, out); });
}

void rows_avx512(BlockFormat format, const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
                 const float* x, int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  with_format(format, [&](auto f) {
    rows_avx512_of<decltype(f)::value>(w, row_bytes, order, cols, x, n, y, y_stride, begin, end);
  });
}

void rows_avx2(BlockFormat format, const uint8_t* w, int64_t row_bytes, const int32_t* order, int64_t cols,
               const float* x, int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  with_format(format, [&](auto f) {
    rows_avx2_of<decltype(f)::value>(w, row_bytes, order, cols, x, n, y, y_stride, begin, end);
  });
}
#endif  // __x86_64__


// A type without a kernel of its own: each row dequantized into `row`
// (L1/L2-resident), then multiplied as an F32 row by `f32`.
void rows_dequantized(GgmlType type, RowsKernel f32, const uint8_t* w, int64_t row_bytes, const int32_t* order,
                      int64_t cols, const float* x, int64_t n, float* y, int64_t y_stride, int64_t begin, int64_t end) {
  std::vector<float> row(static_cast<size_t>(cols));
  const auto* values = reinterpret_cast<const uint8_t*>(row.data());
  for (int64_t r = begin; r < end; ++r) {
    dequantize(type, row_at(w, row_bytes, order, r), row.data(), cols);
    f32(BlockFormat::kF32, values, 0, nullptr, cols, x, n, y + r, y_stride, 0, 1);
  }
}

// fp32 to bf16, rounded to nearest even as fp32_to_bf16() and libtorch do,
// in a loop the compiler vectorizes (a call per value would cost more than
// the dequantizing).
#if defined(__x86_64__)
// Sixteen at a time: the same rounding in integer lanes.
KV_AVX512 void to_bf16_avx512(const float* from, uint16_t* to, int64_t n) {
  const __m512i round = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    const __m512 v = _mm512_loadu_ps(from + k);
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), one);
    __m512i out = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(bits, round), odd), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    out = _mm512_mask_or_epi32(out, nan, _mm512_srli_epi32(bits, 16), quiet);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + k), _mm512_cvtepi32_epi16(out));
  }
  for (; k < n; ++k) to[k] = fp32_to_bf16(from[k]);
}
#endif

void to_bf16(const float* from, uint16_t* to, int64_t n) {
#if defined(__x86_64__)
  if (cpu_has_avx512()) return to_bf16_avx512(from, to, n);
#endif
  for (int64_t k = 0; k < n; ++k) {
    uint32_t bits;
    std::memcpy(&bits, from + k, sizeof bits);
    const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
    const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    to[k] = static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded);
  }
}

// multiply_tiles() dequantizes this many bytes of weights at a time: large
// enough that libtorch's GEMM (oneDNN's AMX / AVX-512 kernels for bf16) runs
// at its full speed, small beside a model.
constexpr int64_t kChunkBytes = 16 << 20;

}  // namespace

QuantMatrix QuantMatrix::single(GgmlType type, int64_t rows, int64_t cols, const uint8_t* data,
                                std::shared_ptr<const void> owner) {
  QuantMatrix m;
  const GgmlTypeSize size = ggml_type_size(type);
  m.parts_.push_back(Part{type, 0, rows, cols / size.block_size * size.block_bytes, data, nullptr});
  if (owner) m.owners_.push_back(std::move(owner));
  m.rows_ = rows;
  m.cols_ = cols;
  return m;
}

std::optional<QuantMatrix> QuantMatrix::from_tensor(const GgufTensorInfo& tensor, std::shared_ptr<const void> owner) {
  if (tensor.dims.empty() || tensor.dims[0] % kQK != 0 || !dequantize_supported(tensor.type)) return std::nullopt;
  const GgmlTypeSize size = ggml_type_size(tensor.type);
  if (size.block_size <= 0 || tensor.dims[0] % size.block_size != 0) return std::nullopt;
  const int64_t cols = tensor.dims[0];
  return single(tensor.type, tensor.n_elements() / cols, cols, tensor.data, std::move(owner));
}

QuantMatrix QuantMatrix::of_floats(const float* values, int64_t rows, int64_t cols, GgmlType type) {
  const bool bf16 = type == GgmlType::kBF16;
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(rows * cols * (bf16 ? 2 : 4)));
  if (bf16) {
    at::parallel_for(0, rows * cols, 4096, [&](int64_t begin, int64_t end) {
      to_bf16(values + begin, reinterpret_cast<uint16_t*>(bytes->data()) + begin, end - begin);
    });
  } else {
    std::memcpy(bytes->data(), values, bytes->size());
  }
  const uint8_t* data = bytes->data();
  return single(bf16 ? GgmlType::kBF16 : GgmlType::kF32, rows, cols, data, std::move(bytes));
}

QuantMatrix QuantMatrix::stack(const std::vector<QuantMatrix>& parts) {
  QuantMatrix m;
  m.cols_ = parts.front().cols_;
  for (const QuantMatrix& p : parts) {
    for (Part part : p.parts_) {
      part.first_row += m.rows_;
      m.parts_.push_back(std::move(part));
    }
    m.owners_.insert(m.owners_.end(), p.owners_.begin(), p.owners_.end());
    m.rows_ += p.rows_;
  }
  return m;
}

QuantMatrix QuantMatrix::with_row_order(const std::vector<int64_t>& order) const {
  QuantMatrix m = *this;
  Part& part = m.parts_.front();
  auto rows = std::make_shared<std::vector<int32_t>>();
  for (int64_t r : order) rows->push_back(part.order ? (*part.order)[static_cast<size_t>(r)] : static_cast<int32_t>(r));
  part.order = std::move(rows);
  return m;
}

std::vector<GgmlType> QuantMatrix::types() const {
  std::vector<GgmlType> out;
  for (const Part& p : parts_) out.push_back(p.type);
  return out;
}

int64_t QuantMatrix::bytes() const {
  int64_t total = 0;
  for (const Part& p : parts_) total += p.rows * p.row_bytes;
  return total;
}

const QuantMatrix::Part& QuantMatrix::part_of(int64_t r) const {
  for (const Part& p : parts_) {
    if (r < p.first_row + p.rows) return p;
  }
  return parts_.back();
}

void QuantMatrix::dequantize_row(int64_t r, float* out) const {
  const Part& p = part_of(r);
  dequantize(p.type, p.row(r - p.first_row), out, cols_);
}

bool QuantMatrix::supported(Kernel kernel) {
  switch (kernel) {
    case Kernel::kAvx512: return cpu_has_avx512();
    case Kernel::kAvx2: return cpu_has_avx2();
    case Kernel::kBest:
    case Kernel::kPortable: return true;
  }
  return false;
}

const char* QuantMatrix::best_kernel_name() {
  return cpu_has_avx512() ? "avx512" : cpu_has_avx2() ? "avx2" : "portable";
}

bool QuantMatrix::int8_vnni() { return quant_kernels::cpu_has_avx512_vnni(); }

void QuantMatrix::multiply(const float* x, int64_t n, float* y, Kernel kernel, Activations activations) const {
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
  const int64_t grain = std::max<int64_t>(16, 32768 / std::max<int64_t>(1, bytes() / std::max<int64_t>(1, rows_)));
  // Rounded once, before the rows are split: every task reads the same copy.
  thread_local quant_kernels::Int8Rows rounded;
  thread_local quant_kernels::Int8Blocks rounded_blocks;
  const bool int8 = activations == Activations::kInt8;
  const bool avx512 = kernel == Kernel::kAvx512;
  const bool per_256 = int8 && (avx512 || kernel == Kernel::kAvx2) && cols_ % 256 == 0;
  const bool per_32 = int8 && (avx512 || kernel == Kernel::kAvx2);
  bool rounded_256 = false, rounded_32 = false;
  for (const Part& p : parts_) {
    if (per_256 && quant_kernels::int8_rows(p.type, avx512)) rounded_256 = true;
    else if (per_32 && quant_kernels::int8_blocks::rows(p.type, avx512)) rounded_32 = true;
  }
  if (rounded_256) quant_kernels::quantize_rows(x, n, cols_, rounded);
  if (rounded_32) quant_kernels::int8_blocks::quantize(x, n, cols_, rounded_blocks);
  const quant_kernels::Int8Rows& x8 = rounded;
  const quant_kernels::Int8Blocks& x8_blocks = rounded_blocks;
  at::parallel_for(0, rows_, grain, [&](int64_t begin, int64_t end) {
    for (const Part& p : parts_) {
      const int64_t from = std::max(begin, p.first_row) - p.first_row;
      const int64_t to = std::min(end, p.first_row + p.rows) - p.first_row;
      if (from >= to) continue;
      const int32_t* order = p.order ? p.order->data() : nullptr;
      float* y_part = y + p.first_row;
      if (auto integer = per_256 ? quant_kernels::int8_rows(p.type, avx512) : nullptr) {
        integer(p.data, p.row_bytes, order, cols_, x8, y_part, rows_, from, to);
      } else if (auto blocks = per_32 ? quant_kernels::int8_blocks::rows(p.type, avx512) : nullptr) {
        blocks(p.data, p.row_bytes, order, cols_, x8_blocks, y_part, rows_, from, to);
      } else if (auto format = block_format_of(p.type)) {
        rows_kernel(*format, p.data, p.row_bytes, order, cols_, x, n, y_part, rows_, from, to);
      } else if (auto own = avx512 ? quant_kernels::avx512_rows(p.type) : nullptr) {
        own(p.data, p.row_bytes, order, cols_, x, n, y_part, rows_, from, to);
      } else {
        rows_dequantized(p.type, rows_kernel, p.data, p.row_bytes, order, cols_, x, n, y_part, rows_, from, to);
      }
    }
  });
}

void QuantMatrix::dequantize_rows(int64_t first, int64_t count, at::ScalarType dtype, void* out) const {
  const bool inference = c10::InferenceMode::is_enabled();
  at::parallel_for(0, count, 16, [&](int64_t begin, int64_t end) {
    c10::InferenceMode mode(inference);
    if (dtype == at::kFloat) {
      for (int64_t r = begin; r < end; ++r) dequantize_row(first + r, static_cast<float*>(out) + r * cols_);
      return;
    }
    std::vector<float> row(static_cast<size_t>(cols_));
    for (int64_t r = begin; r < end; ++r) {
      uint16_t* to = static_cast<uint16_t*>(out) + r * cols_;
      const Part& p = part_of(first + r);
#if defined(__x86_64__)
      const auto format = block_format_of(p.type);
      if (format && bf16_rows_supported(*format)) {
        row_to_bf16(*format, p.row(first + r - p.first_row), cols_, to);
        continue;
      }
      if (auto own = quant_kernels::avx512_bf16_row(p.type)) {
        own(p.row(first + r - p.first_row), cols_, to);
        continue;
      }
#endif
      dequantize(p.type, p.row(first + r - p.first_row), row.data(), cols_);
      to_bf16(row.data(), to, cols_);
    }
  });
}

at::Tensor QuantMatrix::multiply_tiles(const at::Tensor& x) const {
  const at::ScalarType dtype = x.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kBFloat16, "multiply_tiles takes fp32 or bf16, not ", dtype);
  const at::Tensor input = x.contiguous();
  const auto element = static_cast<int64_t>(x.element_size());
  const int64_t chunk_rows = std::min(rows_, std::max<int64_t>(64, kChunkBytes / (cols_ * element)));
  // Reused from call to call: a fresh buffer of this size would be fresh
  // pages, and faulting them in costs more than dequantizing into them.
  thread_local std::vector<uint8_t> scratch;
  scratch.resize(std::max(scratch.size(), static_cast<size_t>(chunk_rows * cols_ * element)));
  if (chunk_rows == rows_) {
    dequantize_rows(0, rows_, dtype, scratch.data());
    return at::mm(input, at::from_blob(scratch.data(), {rows_, cols_}, dtype).t());
  }
  at::Tensor y = at::empty({x.size(0), rows_}, x.options());
  for (int64_t first = 0; first < rows_; first += chunk_rows) {
    const int64_t rows = std::min(chunk_rows, rows_ - first);
    dequantize_rows(first, rows, dtype, scratch.data());
    at::Tensor out = y.narrow(1, first, rows);
    at::mm_out(out, input, at::from_blob(scratch.data(), {rows, cols_}, dtype).t());
  }
  return y;
}

at::Tensor QuantMatrix::linear(const at::Tensor& x) const {
  if (at::GradMode::is_enabled() && x.requires_grad()) return at::linear(x, dense(x.scalar_type()));
  if (x.size(0) > kTiledRows) return multiply_tiles(x);
  const at::Tensor input = x.to(at::kFloat).contiguous();
  at::Tensor y = at::empty({x.size(0), rows_}, at::kFloat);
  multiply(input.data_ptr<float>(), x.size(0), y.data_ptr<float>());
  return y.to(x.scalar_type());
}

at::Tensor QuantMatrix::dense(at::ScalarType dtype) const {
  const bool direct = dtype == at::kFloat || dtype == at::kBFloat16;
  at::Tensor out = at::empty({rows_, cols_}, direct ? dtype : at::kFloat);
  dequantize_rows(0, rows_, out.scalar_type(), out.data_ptr());
  return out.to(dtype);
}

namespace quant_kernels {

bool cpu_has_avx512() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  static const bool has = cpu_has_avx512() && __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
  static const bool has = cpu_has_avx512() && __builtin_cpu_supports("avx512vnni");
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

}  // namespace quant_kernels

}  // namespace kvframe::runtime
