// Writing blocks into an assembled KV buffer — the one operation kv_diff does
// on tensors. A placement takes a stored block's base keys (before RoPE) and
// values and puts them at buffer entries offset .. offset+n-1 as positions
// position .. position+n-1: K rotated once from the base, in fp32, then cast
// to the buffer's dtype; V copied when write_v (a block that only moved keeps
// its values).
//
// Two backends behind apply_placements(): CUDA buffers go to one fused kernel
// launch for the whole batch (placement_cuda.cu) when this build has the
// kernels; everything else to libtorch (placement_torch.cpp), which also runs
// on CUDA, one block at a time.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "kvframe/kv_core/kv_cache.h"
#include "kvframe/kv_core/rope.h"

namespace kvframe::kv_diff {

struct Placement {
  const runtime::BlockKv* src;  // k, v: [n_layer, n_head_kv, n, head_dim]
  int64_t offset;               // first buffer entry
  int64_t position;             // RoPE position of the block's first token
  bool write_v;
};

// The buffer: k, v [n_layer, n_head_kv, capacity, head_dim], contiguous.
struct PlacementTarget {
  at::Tensor k, v;
  const runtime::Rope* rope;
};

// Throws c10::Error (libtorch) or std::runtime_error (a failed CUDA launch).
void apply_placements(const std::vector<Placement>& placements, const PlacementTarget& target);

// The libtorch backend alone (tests compare the backends with it).
void apply_placements_torch(const std::vector<Placement>& placements, const PlacementTarget& target);

// Whether apply_placements() would run this batch on the CUDA kernel.
bool uses_cuda_kernel(const std::vector<Placement>& placements, const PlacementTarget& target);

}  // namespace kvframe::kv_diff
