// A weight matrix as the CPU reads it: the GGUF file's own blocks, memory-
// mapped and never copied (every type dequantize() reads, K-quants included),
// multiplied by every pass on the CPU. This is the only copy of a model's
// matrices there (docs/runtime.md, "Weights once").
//
// Two ways to multiply, by how many activation rows come at once:
// - multiply(): a few rows (decoding steps, short runs). The speed is the
//   bytes read per token, so the blocks are dequantized in registers (Q4_0,
//   Q4_1, Q8_0 and the float types, hand-written AVX-512 / AVX2) or a row at
//   a time into L1/L2 (the other types) and multiplied in fp32: the result
//   is the fp32 reference's (the same dequantized weights) up to summation
//   order.
// - multiply_tiles(): many rows (prefill, block encoding). The speed is the
//   multiply-adds, so chunks of rows are dequantized to the compute dtype
//   (bf16 where the CPU has AVX-512-BF16 or AMX) into a reused buffer and
//   handed to libtorch's GEMM: the result is a dense copy's, without the copy.
//
// Why by hand: no Debian-packaged library multiplies GGML blocks (oneDNN 2.x
// and libtorch 1.13 take per-channel int8 at best, with activations rounded
// to int8 too).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

class QuantMatrix {
 public:
  static constexpr int64_t kBlock = 32;  // cols must be a multiple of it

  QuantMatrix() = default;
  // A GGUF tensor [rows, cols] (torch order), its bytes read in place; they
  // must live as long as `owner` (GgufFile::bytes_owner()) or, with a null
  // owner, as long as the matrix. Null when cols is not a multiple of 32 or
  // the type cannot be dequantized.
  static std::optional<QuantMatrix> from_tensor(const GgufTensorInfo& tensor, std::shared_ptr<const void> owner);
  // fp32 values [rows, cols] kept (copied) as F32, or as BF16 (rounded to
  // nearest even): weights made in memory.
  static QuantMatrix of_floats(const float* values, int64_t rows, int64_t cols, GgmlType type);
  // The rows of `parts` one after another (fusing Q|K|V), each part in its
  // own type, sharing the parts' bytes; all parts must have the same cols.
  static QuantMatrix stack(const std::vector<QuantMatrix>& parts);
  // Row r of the result is row order[r] of this matrix (one part only):
  // read through the order, not copied.
  QuantMatrix with_row_order(const std::vector<int64_t>& order) const;

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  // Each part's type, in row order (one for a plain tensor).
  std::vector<GgmlType> types() const;
  // The bytes its blocks take (shared ones counted once per matrix).
  int64_t bytes() const;

  // Row r as fp32 (cols values).
  void dequantize_row(int64_t r, float* out) const;
  // y[i, r] = sum_c x[i, c] W[r, c] for the n rows of x [n, cols] (row
  // stride cols) into y [n, rows] (row stride rows), over the intra-op
  // threads. `kernel` picks the instruction set (tests compare them).
  enum class Kernel { kBest, kAvx512, kAvx2, kPortable };
  // kInt8: with the AVX-512 or AVX2 kernel, where a part is Q4_K or Q6_K
  // (and cols a multiple of 256), x is rounded to int8 per 256 values (as llama.cpp's
  // Q8_K activations are) and a super-block's groups are multiplied and
  // scaled as integers: a third of the instructions per weight, at half a
  // step of 1/127 of each 256 values' largest; where a part is Q4_0, Q4_1,
  // Q5_0, Q5_1 or Q8_0, per 32 values (Q8_0's and Q8_1's activations).
  // Both instruction sets round to the same integers. Other parts take fp32.
  enum class Activations { kFp32, kInt8 };
  void multiply(const float* x, int64_t n, float* y, Kernel kernel = Kernel::kBest,
                Activations activations = Activations::kFp32) const;
  // The same for x [n, cols] (fp32 or bf16, on the CPU), in x's dtype:
  // tiles of W dequantized to that dtype, multiplied by libtorch's GEMM.
  at::Tensor multiply_tiles(const at::Tensor& x) const;
  // x W^T by whichever of the two suits x's rows (x fp32 or bf16 [n, cols]);
  // under autograd, for an x that needs gradients (training), over a dense
  // copy, which the backward pass keeps until it has run.
  at::Tensor linear(const at::Tensor& x) const;
  // The whole matrix dequantized to `dtype` [rows, cols]: training reads
  // weights under autograd, which keeps them for the backward pass.
  at::Tensor dense(at::ScalarType dtype) const;
  // Whether this CPU runs `kernel`.
  static bool supported(Kernel kernel);
  // The instruction set multiply() picks here: "avx512", "avx2" or "portable".
  static const char* best_kernel_name();
  // Whether its int8 products take AVX-512-VNNI here.
  static bool int8_vnni();

 private:
  struct Part {
    GgmlType type = GgmlType::kF32;
    int64_t first_row = 0, rows = 0, row_bytes = 0;
    const uint8_t* data = nullptr;
    std::shared_ptr<const std::vector<int32_t>> order;  // null: rows in place
    const uint8_t* row(int64_t r) const { return data + (order ? (*order)[static_cast<size_t>(r)] : r) * row_bytes; }
  };
  const Part& part_of(int64_t r) const;
  // Rows [first, first + count) into out [count, cols] as fp32 or bf16, over
  // the intra-op threads.
  void dequantize_rows(int64_t first, int64_t count, at::ScalarType dtype, void* out) const;
  static QuantMatrix single(GgmlType type, int64_t rows, int64_t cols, const uint8_t* data,
                            std::shared_ptr<const void> owner);

  std::vector<Part> parts_;
  std::vector<std::shared_ptr<const void>> owners_;  // keep the parts' bytes alive
  int64_t rows_ = 0, cols_ = 0;
};

// Rows at or below which linear() takes multiply(): the tiles' GEMM pays
// only where each dequantized weight is reused by many rows.
inline constexpr int64_t kTiledRows = 32;

}  // namespace kvframe::runtime
