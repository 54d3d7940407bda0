#include "kvframe/runtime/cpu_process.h"

#include "kvframe/runtime/free_cores.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <thread>

namespace kvframe::runtime {
namespace {

constexpr const char* kReexecGuard = "KVFRAME_CPU_TUNED";

// OpenBLAS's own report of the kernels it chose; empty when the BLAS is not OpenBLAS.
std::string openblas_core() {
  using CoreName = char* (*)();
  auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  return core_name ? std::string(core_name()) : std::string();
}

// How OpenBLAS runs its threads: "OpenMP" (libgomp's, which libtorch's own
// loops share), "its own threads" (the pthread build), "one thread"; empty
// when the BLAS is not OpenBLAS.
std::string openblas_threading() {
  using Parallel = int (*)();
  auto parallel = reinterpret_cast<Parallel>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
  if (!parallel) return "";
  switch (parallel()) {
    case 0: return "one thread";
    case 1: return "its own threads";
    default: return "OpenMP";
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The OpenBLAS core type this CPU can run, when better than `current`; else empty.
std::string better_core(const std::string& current) {
  const std::string core = lower(current);
  const bool has_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const bool avx512_core = core == "skylakex" || core == "cooperlake" || core == "sapphirerapids";
  if (has_avx512) return avx512_core ? "" : "SkylakeX";
  const bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx2_core = avx512_core || core == "haswell" || core == "zen" || core == "skylake";
  if (has_avx2) return avx2_core ? "" : "Haswell";
  return "";
}

// OMP_NUM_THREADS when set (the usual way to size an OpenMP program: a test
// runner that runs one process per core sets 1), else 0.
int threads_from_environment() {
  const char* env = std::getenv("OMP_NUM_THREADS");
  return env ? std::max(0, std::atoi(env)) : 0;
}

}  // namespace

void tune_cpu_process(char** argv, int threads, UnsetThreads unset) {
  const std::string core = openblas_core();
  if (!core.empty() && !std::getenv(kReexecGuard) && !std::getenv("OPENBLAS_CORETYPE")) {
    const std::string better = better_core(core);
    if (!better.empty()) {
      setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
      // OpenMP threads spin ~100K iterations (tens of microseconds) before
      // sleeping: a decoding step's many short parallel regions then find
      // them awake, and they sleep before they could starve other threads
      // (OpenBLAS's pthread build among them, which has a pool of its own).
      // Measured with that build against OMP_WAIT_POLICY=passive: decode
      // 182 -> 197 tok/s (bf16), fp32 prefill of 512 tokens 250 -> 393 tok/s.
      setenv("GOMP_SPINCOUNT", "100000", 0);
      setenv(kReexecGuard, "1", 1);
      execv("/proc/self/exe", argv);  // returns only on failure: carry on untuned
    }
  }
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (threads <= 0) threads = threads_from_environment();
  if (threads > 0) {
    at::set_num_threads(threads);
  } else if (unset == UnsetThreads::kFitFreeCores) {
    fit_threads_to_free_cores_from_now_on();
    fit_threads_to_free_cores();
  } else {
    at::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
}

std::string cpu_backend_description() {
  const std::string core = openblas_core();
  const std::string threading = openblas_threading();
  const std::string blas = core.empty() ? "no OpenBLAS (libtorch's own BLAS)"
                                        : "OpenBLAS " + core + " kernels" + (threading.empty() ? "" : " (" + threading + ")");
  return blas + ", " + std::to_string(at::get_num_threads()) + " threads";
}

}  // namespace kvframe::runtime
