// Decoding steps replayed from CUDA graphs. A step of one token is a few
// dozen small kernels a layer; launched eagerly through libtorch, the host's
// overhead can outlast the GPU's work (reading the weights once), and the
// step then runs at the host's pace, which varies from one machine to the
// next far more than a replayed step does (docs/measured.md, "H200").
// Captured once into a graph, the step is one launch.
//
// A graph is bound to one cache's buffers and serves every step into it:
// the token, its RoPE row, the entry it is written to and how many entries
// attention reads are inputs the graph reads from device memory
// (fused_step_attention reads the length on the device), so lengths change
// without a new capture. The first step into a cache runs eagerly on a side
// stream (cuBLAS and allocator warm-up, and the result should the capture
// fail), is captured, and later steps replay.
//
// Only where it is exact and the build has it: a CUDA libtorch >= 2.5, fp16 or
// bf16, a cache without padding, fused_support().step (Model::Impl makes
// DecodeGraphs only then). Anything else, or a
// capture that fails (reported once on stderr, graphs then off for the
// model), runs the eager forward pass.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "forward_pass.h"
#include "kvframe/kv_core/kv_cache.h"
#include "kvframe/kv_core/rope.h"

namespace kvframe::runtime {

class DecodeGraphs {
 public:
  // For a model computing in `dtype` on `device`, whose keys are rotated by `rope`.
  DecodeGraphs(at::Device device, at::ScalarType dtype, Rope rope);
  ~DecodeGraphs();
  DecodeGraphs(const DecodeGraphs&) = delete;
  DecodeGraphs& operator=(const DecodeGraphs&) = delete;

  // The model's pass for one step: fp32 logits [1, n_vocab] of token ids [1]
  // at the table's position, attention as the plan says. Called to run and
  // capture a cache's first step, never for a replay.
  using Forward = std::function<at::Tensor(const at::Tensor& ids, const Rope::Table& table, AttentionPlan& plan)>;

  // fp32 logits [1, n_vocab] of token `id` appended to `cache` (at entry
  // cache.length, position cache.next_position; the caller advances them),
  // or nullopt when this step is not for a graph (the caller runs it
  // eagerly). `weights_in_use` names what else the pass reads that may
  // change between steps (the adapter applied, or null): a graph serves the
  // steps of one cache with the same.
  std::optional<at::Tensor> step(int64_t id, KvCache& cache, std::shared_ptr<const void> weights_in_use,
                                 const Forward& forward);

 private:
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
