// Launcher for the fused placement kernel (placement_cuda.cu). Plain C++ and
// raw pointers on purpose: the kernel is compiled by nvcc without libtorch's
// headers (Debian's CPU libtorch has no CUDA ones), and a GPU host's torch 2.x
// hands its memory over as pointers just the same.
#pragma once

#include <cstdint>
#include <string>

namespace kvframe::kv_diff::cuda {

enum class DType { kF32, kBF16, kF16 };

// One placement as the kernel reads it (see placement.h). Sources are
// contiguous [n_layer, n_head_kv, n, head_dim] in the buffer's dtype.
struct PlacementDesc {
  const void* src_k;
  const void* src_v;
  int64_t n, offset, position, write_v;
};

struct LaunchArgs {
  const PlacementDesc* host_descs;  // count of them
  PlacementDesc* device_descs;      // room for count, on the buffer's GPU
  int64_t count;
  int64_t max_n;                    // the largest placement's n
  int64_t layer_heads;              // n_layer * n_head_kv
  int64_t capacity, head_dim;
  void* k;                          // buffer, contiguous [layer_heads, capacity, head_dim]
  void* v;
  const float* inv_freq;            // head_dim / 2, on the buffer's GPU
  DType dtype;
};

// Copies the descriptors and launches one kernel for the whole batch, both on
// the legacy default stream (libtorch's default stream: ordered with its
// work). Returns "" or the CUDA error text. The buffer's device must be the
// current one.
std::string launch_placements(const LaunchArgs& args);

}  // namespace kvframe::kv_diff::cuda
