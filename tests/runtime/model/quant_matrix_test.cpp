// Weights as stored (runtime/model/quant_matrix.h): every kernel, every type
// dequantize() reads, against dequantize-then-multiply in double; the tiled
// GEMM path against the same; fused parts and row orders read in place.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "dequant_fixture.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "quant_kernels.h"
#include "quant_matrix.h"

namespace kvframe::runtime {
namespace {

std::vector<float> normal_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = normal(rng);
  return v;
}

// A [rows, cols] tensor of `type` whose blocks are gguf-py's reference blocks
// of that type (tests/runtime/gguf/fixtures), repeated from a per-row offset
// so rows differ; float types hold normal values (the fixture's hold
// infinities and NaNs). Its bytes live in the struct.
struct Stored {
  std::vector<uint8_t> bytes;
  GgufTensorInfo info;
};
Stored stored_of(GgmlType type, int64_t rows, int64_t cols) {
  if (type == GgmlType::kF32 || type == GgmlType::kF16) {
    const at::Tensor values = at::randn({rows, cols}).to(type == GgmlType::kF32 ? at::kFloat : at::kHalf);
    const auto* begin = static_cast<const uint8_t*>(values.data_ptr());
    Stored s;
    s.bytes.assign(begin, begin + values.nbytes());
    s.info = GgufTensorInfo{"w", {cols, rows}, type, 0, s.bytes.size(), s.bytes.data()};
    return s;
  }
  for (const test::DequantCase& c : test::dequant_fixture().cases) {
    if (c.type != type) continue;
    const GgmlTypeSize size = ggml_type_size(type);
    const int64_t source_blocks = c.n_elements / size.block_size, row_blocks = cols / size.block_size;
    Stored s;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t b = 0; b < row_blocks; ++b) {
        const int64_t from = (r * 3 + b) % source_blocks * size.block_bytes;
        s.bytes.insert(s.bytes.end(), c.data.begin() + from, c.data.begin() + from + size.block_bytes);
      }
    }
    s.info = GgufTensorInfo{"w", {cols, rows}, type, 0, s.bytes.size(), s.bytes.data()};
    return s;
  }
  ADD_FAILURE() << "no fixture blocks of " << ggml_type_name(type);
  return {};
}

const std::vector<GgmlType> kEveryType = {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kQ8_0, GgmlType::kQ4_0,
                                          GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ2_K,
                                          GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};

// The matrix's rows, dequantized by the reference dequantize().
std::vector<float> reference_rows(const QuantMatrix& m) {
  std::vector<float> w(static_cast<size_t>(m.rows() * m.cols()));
  for (int64_t r = 0; r < m.rows(); ++r) m.dequantize_row(r, w.data() + r * m.cols());
  return w;
}

// x W^T in double.
std::vector<double> reference_product(const std::vector<float>& w, int64_t rows, int64_t cols,
                                      const std::vector<float>& x, int64_t n) {
  std::vector<double> want(static_cast<size_t>(n * rows));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += static_cast<double>(w[r * cols + c]) * x[i * cols + c];
      want[i * rows + r] = sum;
    }
  }
  return want;
}

TEST(QuantMatrix, EveryKernelMatchesDequantizeThenMultiplyForEveryType) {
  const int64_t rows = 37, cols = 512;  // rows not a multiple of any task size
  for (GgmlType type : kEveryType) {
    const Stored s = stored_of(type, rows, cols);
    auto m = QuantMatrix::from_tensor(s.info, nullptr);
    ASSERT_TRUE(m.has_value()) << ggml_type_name(type);
    EXPECT_EQ(m->types(), std::vector<GgmlType>{type});
    EXPECT_EQ(m->bytes(), static_cast<int64_t>(s.bytes.size()));
    const std::vector<float> w = reference_rows(*m);
    for (int64_t n : {1, 3, 4, 5, 16}) {  // around the kernels' row tiles
      const std::vector<float> x = normal_values(n * cols, 9);
      const std::vector<double> want = reference_product(w, rows, cols, x, n);
      for (auto kernel : {QuantMatrix::Kernel::kAvx512, QuantMatrix::Kernel::kAvx2, QuantMatrix::Kernel::kPortable}) {
        if (!QuantMatrix::supported(kernel)) continue;
        SCOPED_TRACE(ggml_type_name(type) + ", " + std::to_string(n) + " rows, kernel " +
                     std::to_string(static_cast<int>(kernel)));
        std::vector<float> y(static_cast<size_t>(n * rows));
        m->multiply(x.data(), n, y.data(), kernel);
        double scale = 0;
        for (double v : want) scale = std::max(scale, std::abs(v));
        for (size_t k = 0; k < y.size(); ++k) ASSERT_NEAR(y[k], want[k], 1e-5 * (1.0 + scale));
      }
    }
  }
}

// y within the rounding of x to int8 per `group` values (half a step, 1/254
// of its group's largest |x|, per value) times |w|, summed, and a little
// for fp32 sums. Rounding per 32 values is within the bound per 256.
void expect_within_int8_rounding(const std::vector<float>& w, const std::vector<float>& x,
                                 const std::vector<double>& want, const std::vector<float>& y, int64_t rows,
                                 int64_t cols, int64_t n, int64_t group) {
  for (int64_t i = 0; i < n; ++i) {
    std::vector<double> half_step(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; c += group) {
      float largest = 0;
      for (int64_t k = 0; k < group; ++k) largest = std::max(largest, std::abs(x[i * cols + c + k]));
      std::fill_n(half_step.begin() + c, group, largest / 254.0);
    }
    for (int64_t r = 0; r < rows; ++r) {
      double bound = 0, magnitude = 0;
      for (int64_t c = 0; c < cols; ++c) {
        bound += std::abs(w[r * cols + c]) * half_step[static_cast<size_t>(c)];
        magnitude += std::abs(static_cast<double>(w[r * cols + c]) * x[i * cols + c]);
      }
      const size_t k = static_cast<size_t>(i * rows + r);
      ASSERT_NEAR(y[k], want[k], bound + 1e-5 * magnitude + 1e-6) << "row " << r;
    }
  }
}

TEST(QuantMatrix, Int8ActivationsStayWithinTheirRounding) {
  // With the AVX-512 and AVX2 kernels, Q4_K and Q6_K multiply activations
  // rounded to int8 per 256 values, the 32-value block types per 32 values
  // (a smaller step); every other type (and the portable kernel) fp32 ones,
  // so the bound holds for all. Odd shapes: rows no multiple of a task, an
  // odd count of 32-value blocks (288 columns, too few for a K-quant), three
  // super-blocks; one thread and two.
  struct Shape {
    int64_t rows, cols;
  };
  const int threads = at::get_num_threads();
  for (const Shape shape : {Shape{37, 512}, Shape{77, 768}, Shape{29, 288}}) {
    const int64_t rows = shape.rows, cols = shape.cols;
    for (int thread_count : {1, 2}) {
      at::set_num_threads(thread_count);
      for (GgmlType type : kEveryType) {
        if (cols % ggml_type_size(type).block_size != 0) continue;
        const Stored s = stored_of(type, rows, cols);
        const QuantMatrix m = *QuantMatrix::from_tensor(s.info, nullptr);
        const std::vector<float> w = reference_rows(m);
        for (int64_t n : {1, 3, 5}) {
          const std::vector<float> x = normal_values(n * cols, 21);
          const std::vector<double> want = reference_product(w, rows, cols, x, n);
          std::vector<float> avx512_result;
          for (auto kernel : {QuantMatrix::Kernel::kAvx512, QuantMatrix::Kernel::kAvx2, QuantMatrix::Kernel::kPortable}) {
            if (!QuantMatrix::supported(kernel)) continue;
            const bool avx512 = kernel == QuantMatrix::Kernel::kAvx512;
            SCOPED_TRACE(ggml_type_name(type) + ", " + std::to_string(rows) + " x " + std::to_string(cols) + ", " +
                         std::to_string(n) + " rows, " + std::to_string(thread_count) + " threads, kernel " +
                         std::to_string(static_cast<int>(kernel)));
            std::vector<float> y(static_cast<size_t>(n * rows));
            m.multiply(x.data(), n, y.data(), kernel, QuantMatrix::Activations::kInt8);
            expect_within_int8_rounding(w, x, want, y, rows, cols, n, cols % 256 == 0 ? 256 : 32);
            const bool portable = kernel == QuantMatrix::Kernel::kPortable;
            const bool int8 = !portable && (quant_kernels::int8_rows(type, avx512) != nullptr ||
                                            quant_kernels::int8_blocks::rows(type, avx512) != nullptr);
            if (int8) {  // it took an int8 kernel: not fp32's result
              std::vector<float> fp32(y.size());
              m.multiply(x.data(), n, fp32.data(), kernel);
              EXPECT_NE(y, fp32);
            }
            // Both instruction sets round to the same integers and sum them
            // exactly: they differ only in the fp32 sums' order.
            if (int8 && avx512) avx512_result = y;
            if (int8 && !avx512 && !avx512_result.empty()) {
              double scale = 0;
              for (double v : want) scale = std::max(scale, std::abs(v));
              for (size_t k = 0; k < y.size(); ++k) ASSERT_NEAR(y[k], avx512_result[k], 1e-5 * (1 + scale));
            }
          }
        }
      }
    }
  }
  at::set_num_threads(threads);
}

TEST(QuantMatrix, Avx512Int8KernelsSumTheSameIntegersWithAndWithoutVnni) {
  // multiply() takes the VNNI kernels where the CPU has them; the others
  // (AVX-512 CPUs without VNNI) sum the same integers in more instructions:
  // the same result, bit for bit. Both called directly, every int8 type.
  if (!quant_kernels::cpu_has_avx512_vnni()) GTEST_SKIP() << "this CPU has no AVX-512-VNNI";
  for (int64_t cols : {288, 768}) {
    const int64_t rows = 23;
    for (int64_t n : {1, 3}) {
      const std::vector<float> x = normal_values(n * cols, 5);
      quant_kernels::Int8Blocks per_32;
      quant_kernels::int8_blocks::quantize(x.data(), n, cols, per_32);
      quant_kernels::Int8Rows per_256;
      if (cols % 256 == 0) quant_kernels::quantize_rows(x.data(), n, cols, per_256);
      for (GgmlType type : kEveryType) {
        const auto blocks = [&](bool vnni) { return quant_kernels::int8_blocks::rows_avx512(type, vnni); };
        const auto supers = [&](bool vnni) { return quant_kernels::int8_rows_avx512(type, vnni); };
        if (!blocks(false) && !(supers(false) && cols % 256 == 0)) continue;
        SCOPED_TRACE(ggml_type_name(type) + ", " + std::to_string(cols) + " columns, " + std::to_string(n) + " rows");
        const Stored s = stored_of(type, rows, cols);
        const int64_t row_bytes = static_cast<int64_t>(s.bytes.size()) / rows;
        std::vector<float> plain(static_cast<size_t>(n * rows)), vnni(plain.size());
        for (bool with_vnni : {false, true}) {
          float* y = with_vnni ? vnni.data() : plain.data();
          if (blocks(with_vnni)) blocks(with_vnni)(s.bytes.data(), row_bytes, nullptr, cols, per_32, y, rows, 0, rows);
          else supers(with_vnni)(s.bytes.data(), row_bytes, nullptr, cols, per_256, y, rows, 0, rows);
        }
        EXPECT_EQ(plain, vnni);
      }
    }
  }
}

TEST(QuantMatrix, Int8RowsOfABatchEqualEachRowAlone) {
  // The AVX-512 int8 kernels multiply several activation rows per unpacked
  // weight block (a decoding step batched over sessions); each row's sums
  // run as they would alone, so a batch of any size equals its rows one at
  // a time, bit for bit, with VNNI and without: K-quants per 256 values,
  // the 32-value types per 32 (an odd count of blocks at 288 columns).
  if (!quant_kernels::cpu_has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512";
  const int64_t rows = 19;
  for (int64_t cols : {288, 512}) {
    for (GgmlType type : kEveryType) {
      for (bool vnni : {false, true}) {
        if (vnni && !quant_kernels::cpu_has_avx512_vnni()) continue;
        const auto blocks = quant_kernels::int8_blocks::rows_avx512(type, vnni);
        const auto supers = cols % 256 == 0 ? quant_kernels::int8_rows_avx512(type, vnni) : nullptr;
        if (!blocks && !supers) continue;
        SCOPED_TRACE(ggml_type_name(type) + ", " + std::to_string(cols) + " columns" + (vnni ? ", VNNI" : ""));
        const Stored s = stored_of(type, rows, cols);
        const int64_t row_bytes = static_cast<int64_t>(s.bytes.size()) / rows;
        // x's n rows through the kernel, into y [n, rows].
        auto multiply = [&](const float* x, int64_t n) {
          std::vector<float> y(static_cast<size_t>(n * rows));
          if (blocks) {
            quant_kernels::Int8Blocks q;
            quant_kernels::int8_blocks::quantize(x, n, cols, q);
            blocks(s.bytes.data(), row_bytes, nullptr, cols, q, y.data(), rows, 0, rows);
          } else {
            quant_kernels::Int8Rows q;
            quant_kernels::quantize_rows(x, n, cols, q);
            supers(s.bytes.data(), row_bytes, nullptr, cols, q, y.data(), rows, 0, rows);
          }
          return y;
        };
        for (int64_t n : {2, 3, 4, 5, 9}) {
          const std::vector<float> x = normal_values(n * cols, 31);
          const std::vector<float> together = multiply(x.data(), n);
          for (int64_t i = 0; i < n; ++i) {
            EXPECT_EQ(std::vector<float>(together.begin() + i * rows, together.begin() + (i + 1) * rows),
                      multiply(x.data() + i * cols, 1))
                << n << " rows, row " << i;
          }
        }
      }
    }
  }
}

TEST(QuantMatrix, TilesMatchADenseCopyInFp32AndBf16) {
  const int64_t rows = 301, cols = 768;  // several tiles, the last one short
  for (GgmlType type : {GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ8_0, GgmlType::kQ5_0}) {
    const Stored s = stored_of(type, rows, cols);
    const QuantMatrix m = *QuantMatrix::from_tensor(s.info, nullptr);
    for (at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      SCOPED_TRACE(ggml_type_name(type) + (dtype == at::kFloat ? ", fp32" : ", bf16"));
      const at::Tensor dense = m.dense(dtype);
      ASSERT_EQ(dense.sizes(), (std::vector<int64_t>{rows, cols}));
      for (int64_t n : {33, 130}) {
        const at::Tensor x = at::randn({n, cols}).to(dtype);
        const at::Tensor want = at::linear(x.to(at::kFloat), dense.to(at::kFloat));
        const at::Tensor got = m.multiply_tiles(x);
        ASSERT_EQ(got.scalar_type(), dtype);
        const double err = (got.to(at::kFloat) - want).abs().max().item<double>() / want.abs().max().item<double>();
        EXPECT_LT(err, dtype == at::kFloat ? 1e-5 : 2e-2) << n << " rows";
        // linear() picks the path by rows; both give the dense result.
        EXPECT_LT((m.linear(x).to(at::kFloat) - want).abs().max().item<double>() / want.abs().max().item<double>(),
                  dtype == at::kFloat ? 1e-5 : 2e-2);
      }
    }
  }
}

TEST(QuantMatrix, LargeMatricesGoInChunksUnderInferenceMode) {
  // Over 16 MB of fp32 rows: several chunks, each dequantized by the
  // intra-op threads into the caller's tensors, which InferenceMode makes
  // inference tensors.
  const int64_t rows = 4200, cols = 1024;
  const Stored s = stored_of(GgmlType::kQ4_K, rows, cols);
  const QuantMatrix m = *QuantMatrix::from_tensor(s.info, nullptr);
  const at::Tensor x = at::randn({40, cols});
  const at::Tensor want = at::linear(x, m.dense(at::kFloat));
  c10::InferenceMode inference;
  const at::Tensor got = m.multiply_tiles(x);
  EXPECT_LT((got - want).abs().max().item<double>() / want.abs().max().item<double>(), 1e-5);
}

TEST(QuantMatrix, MixedTypesStackInPlace) {
  const Stored a = stored_of(GgmlType::kQ4_K, 8, 256), b = stored_of(GgmlType::kQ6_K, 4, 256);
  const QuantMatrix qa = *QuantMatrix::from_tensor(a.info, nullptr), qb = *QuantMatrix::from_tensor(b.info, nullptr);
  const QuantMatrix both = QuantMatrix::stack({qa, qb});
  EXPECT_EQ(both.types(), (std::vector<GgmlType>{GgmlType::kQ4_K, GgmlType::kQ6_K}));
  EXPECT_EQ(both.rows(), 12);
  EXPECT_EQ(both.bytes(), qa.bytes() + qb.bytes());
  std::vector<float> got(256), want(256);
  both.dequantize_row(9, got.data());
  qb.dequantize_row(1, want.data());
  EXPECT_EQ(got, want);
  both.dequantize_row(2, got.data());
  qa.dequantize_row(2, want.data());
  EXPECT_EQ(got, want);
  // Each part's rows land in its own columns of the product.
  const std::vector<float> x = normal_values(3 * 256, 4);
  std::vector<float> y(3 * 12);
  both.multiply(x.data(), 3, y.data());
  const std::vector<double> expected = reference_product(reference_rows(both), 12, 256, x, 3);
  for (size_t k = 0; k < y.size(); ++k) EXPECT_NEAR(y[k], expected[k], 1e-3);
}

TEST(QuantMatrix, RowOrdersAreReadThroughNotCopied) {
  const Stored s = stored_of(GgmlType::kQ4_K, 6, 256);
  const QuantMatrix m = *QuantMatrix::from_tensor(s.info, nullptr);
  const QuantMatrix reordered = m.with_row_order({5, 3, 1, 0, 2, 4});
  EXPECT_EQ(reordered.bytes(), m.bytes());
  std::vector<float> got(256), want(256);
  reordered.dequantize_row(1, got.data());
  m.dequantize_row(3, want.data());
  EXPECT_EQ(got, want);
  // An order of an order composes.
  const QuantMatrix twice = reordered.with_row_order({1, 0, 2, 3, 4, 5});
  twice.dequantize_row(0, got.data());
  EXPECT_EQ(got, want);
  const at::Tensor x = at::randn({40, 256});
  const at::Tensor want_y = at::linear(x, reordered.dense(at::kFloat));
  EXPECT_LT((reordered.multiply_tiles(x) - want_y).abs().max().item<double>(), 1e-3);
}

TEST(QuantMatrix, Int8ActivationsReadEachPartThroughItsRowOrder) {
  // A reordered Q4_1 part (rounded per 32), a Q4_K part
  // (per 256) and an F32 part (fp32 activations) stacked: each part's
  // columns of the product are that part's product alone, exactly.
  const Stored a = stored_of(GgmlType::kQ4_1, 5, 256), b = stored_of(GgmlType::kQ4_K, 4, 256),
               c = stored_of(GgmlType::kF32, 3, 256);
  const std::vector<QuantMatrix> parts = {QuantMatrix::from_tensor(a.info, nullptr)->with_row_order({4, 2, 0, 1, 3}),
                                          *QuantMatrix::from_tensor(b.info, nullptr),
                                          *QuantMatrix::from_tensor(c.info, nullptr)};
  const QuantMatrix all = QuantMatrix::stack(parts);
  const int64_t n = 2;
  const std::vector<float> x = normal_values(n * 256, 8);
  for (auto kernel : {QuantMatrix::Kernel::kAvx512, QuantMatrix::Kernel::kAvx2}) {
    if (!QuantMatrix::supported(kernel)) continue;
    SCOPED_TRACE("kernel " + std::to_string(static_cast<int>(kernel)));
    std::vector<float> y(static_cast<size_t>(n * all.rows()));
    all.multiply(x.data(), n, y.data(), kernel, QuantMatrix::Activations::kInt8);
    int64_t first = 0;
    for (const QuantMatrix& part : parts) {
      std::vector<float> alone(static_cast<size_t>(n * part.rows()));
      part.multiply(x.data(), n, alone.data(), kernel, QuantMatrix::Activations::kInt8);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < part.rows(); ++r) {
          EXPECT_EQ(y[static_cast<size_t>(i * all.rows() + first + r)], alone[static_cast<size_t>(i * part.rows() + r)]);
        }
      }
      first += part.rows();
    }
  }
}

TEST(QuantMatrix, FileBytesStayWhileTheOwnerLives) {
  auto bytes = std::make_shared<Stored>(stored_of(GgmlType::kQ8_0, 4, 64));
  const GgufTensorInfo info = bytes->info;
  const QuantMatrix m = *QuantMatrix::from_tensor(info, bytes);
  std::vector<float> before(64), after(64);
  m.dequantize_row(3, before.data());
  bytes.reset();  // the matrix holds the last reference
  m.dequantize_row(3, after.data());
  EXPECT_EQ(before, after);
}

TEST(QuantMatrix, Bf16RoundingIsLibtorchs) {
  // Ties, denormals, infinities and 37 values (a vector tail) among normal ones.
  std::vector<float> values = normal_values(3 * 37, 12);
  const float specials[] = {1.00390625f, 1.01171875f, -2.00781250f, 1e-40f, -3e-39f, INFINITY, -INFINITY, 0.0f, -0.0f};
  std::copy(std::begin(specials), std::end(specials), values.begin());
  const QuantMatrix m = QuantMatrix::of_floats(values.data(), 3, 37, GgmlType::kBF16);
  const at::Tensor want = at::from_blob(values.data(), {3, 37}, at::kFloat).to(at::kBFloat16).to(at::kFloat);
  std::vector<float> row(37);
  for (int64_t r = 0; r < 3; ++r) {
    m.dequantize_row(r, row.data());
    for (int64_t c = 0; c < 37; ++c) {
      const float w = want[r][c].item<float>();
      EXPECT_EQ(std::memcmp(&row[static_cast<size_t>(c)], &w, sizeof w), 0) << "value " << values[r * 37 + c];
    }
  }
}

TEST(QuantMatrix, Bf16TilesAreTheFp32ValuesRounded) {
  // Whichever way a row goes to bf16 (blocks expanded in registers, or
  // dequantized to fp32 and rounded), the tile holds libtorch's rounding.
  for (GgmlType type : kEveryType) {
    SCOPED_TRACE(ggml_type_name(type));
    const Stored s = stored_of(type, 37, 512);
    const QuantMatrix m = *QuantMatrix::from_tensor(s.info, nullptr);
    EXPECT_TRUE(at::equal(m.dense(at::kBFloat16), m.dense(at::kFloat).to(at::kBFloat16)));
  }
}

TEST(QuantMatrix, NamesTheKernelItPicks) {
  const std::string name = QuantMatrix::best_kernel_name();
  EXPECT_TRUE(name == "avx512" || name == "avx2" || name == "portable") << name;
}

}  // namespace
}  // namespace kvframe::runtime
