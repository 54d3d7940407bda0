// Makes libtorch's CPU path run at full speed in this process. Call it first
// thing in main() of a program that runs models on the CPU.
//
// Each step fixes a slowdown measured on this project's machines:
//  1. OpenBLAS picks its matmul kernels from the CPU model when it is loaded.
//     On virtual machines that mask the model it falls back to the SSE3
//     "Prescott" kernels, several times slower than the AVX2 or AVX-512 ones
//     the CPU can run (docs/measured.md, "CPU process settings"). When that
//     happened and the CPU has AVX2 or AVX-512, the process re-executes itself
//     once with OPENBLAS_CORETYPE set (OpenBLAS reads it only when loaded).
//  2. GOMP_SPINCOUNT=100000 (set in that same re-execution when unset):
//     OpenMP threads spin tens of microseconds before sleeping, so a decoding
//     step's short parallel regions find them awake, yet they sleep before
//     they starve other threads (libgomp's default spins longer;
//     OMP_WAIT_POLICY=passive, used before, decoded slower).
//     scripts/setup.sh selects Debian's OpenMP build of OpenBLAS, which runs
//     on these same libgomp threads: faster than the pthread build, whose
//     pool of its own spins beside libgomp's, for a process with the cores
//     to itself; slower when several multi-threaded processes share the cores
//     (docs/runtime.md, "CPU speed": give each fewer threads). The figures:
//     docs/measured.md.
//  3. Freed activation buffers stay in the heap (mallopt) instead of going
//     back to the OS, so the next forward pass does not page-fault them in anew.
//  4. libtorch's intra-op threads = `threads`; when 0, OMP_NUM_THREADS if set,
//     else (kFitFreeCores) as many as other processes leave cores free,
//     re-read between passes (free_cores.h), or (kEveryCore) every core.
//     Debian's libtorch starts with one.
// Programs that embed kvframe and cannot re-execute can set
// OPENBLAS_CORETYPE=SkylakeX (or Haswell) and GOMP_SPINCOUNT=100000 in
// their environment instead.
#pragma once

#include <string>

namespace kvframe::runtime {

// What `threads` = 0 without OMP_NUM_THREADS means: a server or game fits its
// threads to the free cores; a test wants a count that does not change.
enum class UnsetThreads { kFitFreeCores, kEveryCore };

// May not return: re-executes the program (same arguments) as described above.
void tune_cpu_process(char** argv, int threads = 0, UnsetThreads unset = UnsetThreads::kFitFreeCores);

// "OpenBLAS SkylakeX kernels (OpenMP), 2 threads" / "no OpenBLAS (libtorch's own BLAS), 2 threads": for logs.
std::string cpu_backend_description();

}  // namespace kvframe::runtime
