// bench_dequantize: dequantize() per type on each instruction set this CPU
// has — the portable kernels against the AVX2 and AVX-512 ones
// (runtime/gguf/dequantize_simd.h).
//
//   build/bench/bench_dequantize [--rows 4096] [--cols 4096] [--reps 5] [--seed 1]
//
// A rows x cols matrix of random blocks per type is dequantized two ways:
// row by row into one row of floats that stays in cache, as a matrix
// multiply dequantizing its weights on the fly does, and whole, into a
// rows x cols float matrix (64 MiB at 4096 x 4096: bound by memory bandwidth).
// Figures are ns per element, the best of --reps. Every kernel's matrix is
// compared with the portable one's, bit for bit; exit status 4 if any differs.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kvframe/cli_options/command_line.h"
#include "kvframe/common/exit_codes.h"
#include "dequantize_simd.h"

namespace {

namespace gguf = kvframe::runtime;
using gguf::GgmlType;
using gguf::gguf_detail::Isa;
using Clock = std::chrono::steady_clock;

constexpr Isa kIsas[] = {Isa::kPortable, Isa::kAvx2, Isa::kAvx512};

// Best of `reps` runs of `run`, in ns per element of `elements`.
template <class Run>
double best_ns_per_element(int reps, int64_t elements, Run run) {
  double best = 1e300;
  for (int rep = 0; rep < reps; ++rep) {
    const auto start = Clock::now();
    run();
    best = std::min(best, std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  return best / static_cast<double>(elements);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 4096, cols = 4096;
  int reps = 5;
  uint64_t seed = 1;
  CLI::App app{"dequantize() per type: portable vs AVX2 vs AVX-512 kernels, ns per element."};
  app.add_option("--rows", rows, "matrix rows")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--cols", cols, "matrix columns, a multiple of 256")
      ->capture_default_str()
      ->check(CLI::PositiveNumber & CLI::Validator([](std::string& s) {
                return std::stoll(s) % 256 == 0 ? std::string() : std::string("not a multiple of 256");
              }, "MULTIPLE OF 256"));
  app.add_option("--reps", reps, "runs per figure, the best one kept")->capture_default_str()->check(
      CLI::PositiveNumber);
  app.add_option("--seed", seed, "random seed for the blocks")->capture_default_str();
  if (const std::optional<int> exit_now = kvframe::cli::parse_command_line(app, argc, argv)) return *exit_now;

  const int64_t n = rows * cols;
  std::printf("dequantize, %lld x %lld elements, ns per element (best of %d); '-': not on this CPU\n"
              "row: one row at a time into a %lld-float buffer (in cache); matrix: all %.1f MiB of floats\n\n",
              static_cast<long long>(rows), static_cast<long long>(cols), reps, static_cast<long long>(cols),
              static_cast<double>(n) * sizeof(float) / (1 << 20));
  std::printf("%-6s %21s %21s %21s %21s %21s %21s %6s\n", "type", "row portable", "row avx2", "row avx512",
              "matrix portable", "matrix avx2", "matrix avx512", "exact");

  std::mt19937_64 rng(seed);
  std::vector<float> row(static_cast<std::size_t>(cols)), expected(static_cast<std::size_t>(n)),
      actual(static_cast<std::size_t>(n));
  bool all_exact = true;
  for (GgmlType type : {GgmlType::kQ4_K, GgmlType::kQ6_K, GgmlType::kQ5_K, GgmlType::kQ5_0, GgmlType::kQ5_1,
                        GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ2_K, GgmlType::kQ3_K}) {
    const gguf::GgmlTypeSize size = gguf::ggml_type_size(type);
    const int64_t row_bytes = cols / size.block_size * size.block_bytes;
    // Random bytes: a scale that comes out inf or NaN costs no time, and no
    // result is a subnormal float (fp16 scales times small integers).
    std::vector<uint8_t> blocks(static_cast<std::size_t>(rows * row_bytes));
    for (uint8_t& byte : blocks) byte = static_cast<uint8_t>(rng());

    double row_ns[3] = {}, matrix_ns[3] = {};
    bool exact = true;
    for (int i = 0; i < 3; ++i) {
      const Isa isa = kIsas[i];
      if (!gguf::gguf_detail::isa_supported(isa)) continue;
      row_ns[i] = best_ns_per_element(reps, n, [&] {
        for (int64_t r = 0; r < rows; ++r) {
          gguf::gguf_detail::dequantize_with(isa, type, blocks.data() + r * row_bytes, row.data(), cols);
        }
      });
      std::vector<float>& out = isa == Isa::kPortable ? expected : actual;
      matrix_ns[i] = best_ns_per_element(
          reps, n, [&] { gguf::gguf_detail::dequantize_with(isa, type, blocks.data(), out.data(), n); });
      if (isa != Isa::kPortable) exact = exact && std::memcmp(actual.data(), expected.data(), n * sizeof(float)) == 0;
    }
    all_exact = all_exact && exact;

    std::printf("%-6s", gguf::ggml_type_name(type).c_str());
    for (const double* ns : {row_ns, matrix_ns}) {
      for (int i = 0; i < 3; ++i) {
        if (ns[i] == 0) {
          std::printf(" %21s", "-");
        } else if (i == 0) {
          std::printf(" %21.3f", ns[i]);
        } else {
          std::printf(" %13.3f (%4.1fx)", ns[i], ns[0] / ns[i]);
        }
      }
    }
    std::printf(" %6s\n", exact ? "yes" : "NO");
  }
  std::printf("\nevery kernel %s the portable one bit for bit\n", all_exact ? "matches" : "DOES NOT match");
  return all_exact ? kvframe::kExitOk : kvframe::kExitCheckFailed;
}
