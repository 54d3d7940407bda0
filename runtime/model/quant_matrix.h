// Weights as the CPU step path reads them (cpu_step.cpp): a matrix kept in
// one of GGML's 32-element block formats or a float type, the GGUF file's own
// bytes wherever kvframe has a kernel for its type, multiplied with
// hand-written AVX-512 / AVX2 kernels.
//
// Why by hand: a decoding step multiplies one activation row by every weight
// of the model, so its speed is the bytes read per token. Keeping the file's
// 4- and 8-bit blocks reads 4-8x fewer bytes than libtorch's fp32 / bf16
// weights, and no Debian-packaged library multiplies GGML blocks (oneDNN 2.x
// and libtorch 1.13 take per-channel int8 at best, and with activations
// rounded to int8 too). The kernels dequantize a block in registers and
// multiply in fp32, so the result is the fp32 reference's (the same
// dequantized weights) up to summation order. K-quants (no kernel yet) are
// rounded to Q8_0 at load.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

// Float rows are read as 32-element "blocks" too, so one loop serves all.
enum class BlockFormat : uint8_t { kQ4_0, kQ4_1, kQ8_0, kF32, kF16, kBF16 };

class QuantMatrix {
 public:
  static constexpr int64_t kBlock = 32;  // elements per block, every format

  QuantMatrix() = default;
  // A GGUF tensor [rows, cols] (torch order): Q4_0, Q4_1, Q8_0, F32, F16 and
  // BF16 keep their bytes; every other type dequantize() reads (Q5_0, Q5_1
  // and the K-quants) is dequantized and rounded to Q8_0 (error <= 1/254 of
  // each 32 values' largest). Null when cols is not a multiple of 32 or the
  // type cannot be dequantized.
  static std::optional<QuantMatrix> from_tensor(const GgufTensorInfo& tensor);
  // fp32 values [rows, cols] kept as F32, or as BF16 (rounded to nearest even).
  static QuantMatrix of_floats(const float* values, int64_t rows, int64_t cols, BlockFormat format);
  // The rows of `parts` one after another (fusing Q|K|V); all parts must
  // have the same cols. Parts in different formats all go to F32 when one is
  // a float type (exact), else to Q8_0.
  static QuantMatrix stack(const std::vector<QuantMatrix>& parts);
  // Row r of the result is row order[r] of this matrix.
  QuantMatrix reorder_rows(const std::vector<int64_t>& order) const;

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  BlockFormat format() const { return format_; }

  // Row r as fp32 (cols values).
  void dequantize_row(int64_t r, float* out) const;
  // y[i, r] = sum_c x[i, c] W[r, c] for the n rows of x [n, cols] (row
  // stride cols) into y [n, rows] (row stride rows), over the intra-op
  // threads. `kernel` picks the instruction set (tests compare them).
  enum class Kernel { kBest, kAvx512, kAvx2, kPortable };
  void multiply(const float* x, int64_t n, float* y, Kernel kernel = Kernel::kBest) const;
  // Whether this CPU runs `kernel`.
  static bool supported(Kernel kernel);

 private:
  QuantMatrix(BlockFormat format, int64_t rows, int64_t cols);
  // A matrix in `format` (Q8_0, F32 or BF16) whose row r row_values(r, out)
  // writes as cols fp32 values; rows converted in parallel.
  static QuantMatrix converted(BlockFormat format, int64_t rows, int64_t cols,
                               const std::function<void(int64_t, float*)>& row_values);
  int64_t row_bytes() const;
  const uint8_t* row(int64_t r) const { return data_.data() + r * row_bytes(); }

  BlockFormat format_ = BlockFormat::kQ8_0;
  int64_t rows_ = 0, cols_ = 0;
  std::vector<uint8_t> data_;
};

GgmlType ggml_type_of(BlockFormat format);

}  // namespace kvframe::runtime
