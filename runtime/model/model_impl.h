// Model::Impl: the loaded model and its one forward pass (forward_pass.h),
// which the KV-cache path (model.cpp), block attention's encoder
// (block_encoder.cpp), branch decoding (branches.cpp) and training
// (training.cpp) all run on its libtorch backend, each with its own
// attention plan, and the CPU's decoding steps on its step backend. Shapes:
// n or T new tokens, L keys, H query heads, KH key/value heads
// (GQA: H = KH * G), d head size.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/Exception.h>

#include <memory>
#include <string>
#include <vector>

#include "forward_pass.h"
#include "fused_attention.h"
#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "lora_impl.h"
#include "weights.h"

namespace kvframe::runtime {

struct StepWeights;  // cpu_step.h
class DecodeGraphs;  // decode_graph.h

struct Model::Impl {
  ModelConfig config;
  Weights weights;
  Rope rope;
  at::Device device;
  at::ScalarType dtype;
  // The adapter applied on the fly (null: none), and one merged into
  // `weights` at load (its fingerprint, 0: none).
  std::shared_ptr<LoraAdapter> adapter;
  uint64_t merged_adapter = 0;
  // The CPU's matrices as the file stores them (cpu_step.h), read by every
  // pass there, `weights` then holding norms and biases only (null: dense
  // libtorch weights: CUDA, or step_kernels off); and the merged adapters'
  // pairs in fp32, which the stored blocks cannot take.
  std::shared_ptr<const StepWeights> step;
  std::vector<std::vector<LayerLora>> merged_step_lora;
  // Which of torch's fused attention kernels run here (fused_attention.h),
  // and decoding steps replayed from CUDA graphs (null: every step eagerly):
  // both settled once, at load, by use_fused_kernels().
  FusedSupport fused_kernels;
  std::shared_ptr<DecodeGraphs> graphs;
  void use_fused_kernels(bool cuda_graphs);
  // Rope::query_scale() where the passes read it: on the device, in the
  // compute dtype, copied once (a CUDA graph cannot capture the copy).
  at::Tensor query_scale = rope.query_scale().defined() ? rope.query_scale().to(device, dtype) : at::Tensor();
  // ModelParams::threads; use_threads() applies it to the calling thread
  // at the start of each pass on the CPU (free_cores.cpp).
  int threads = 0;
  void use_threads() const;

  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
    // In fp32 whatever the compute dtype, as the reference does.
    at::Tensor x32 = x.to(at::kFloat);
#ifdef KVFRAME_TORCH_FUSED_RMS_NORM
    // On CUDA one kernel instead of six (launches are what a step waits on
    // there); training keeps the composite below for its gradients.
    if (x.is_cuda() && !at::GradMode::is_enabled()) {
      return std::get<0>(at::_fused_rms_norm(x32, {x.size(-1)}, weight, config.rms_eps)).to(dtype);
    }
#endif
    at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + config.rms_eps);
    return (normed * weight).to(dtype);
  }

  // Whether the adapter changes tokens of this part of the prompt.
  bool adapts(PromptPart part) const {
    return adapter && (adapter->params().scope == LoraScope::kAll || part == PromptPart::kQuery);
  }

  // The forward pass on its libtorch backend (torch_kernels.cpp): tokens
  // ids [T] at rope_table's positions through every layer, attention as
  // `plan` says, the adapter applied when `adapted`. Returns the last hidden
  // states [T, n_embd] (or those of the layer where the plan ended the pass).
  at::Tensor run(const at::Tensor& ids, const Rope::Table& rope_table, AttentionPlan& plan, bool adapted) const;
  // Whether n tokens appended to `cache` may take the CPU step backend,
  // and the forward pass on it (step_kernels.cpp) over one or several
  // caches: segment s appends ids[first .. first + n) to its cache (the
  // caller advances lengths and positions). The matrices are read once for
  // all segments' tokens; each segment attends to its own cache only.
  // Returns fp32 logits [rows, n_vocab] of the packed tokens `rows`.
  struct StepSegment {
    KvCache* cache = nullptr;
    int64_t first = 0, n = 0;
  };
  bool steps_on_cpu(const KvCache& cache, int64_t n) const;
  at::Tensor step_on_cpu(const int64_t* ids, const std::vector<StepSegment>& segments,
                         const std::vector<int64_t>& rows, bool adapted) const;
  // The forward pass's kernel backends (forward_pass.h).
  class TorchKernels;  // torch_kernels.h
  class StepKernels;   // step_kernels.h
  // fp32 logits [rows, n_vocab] of hidden states [rows, n_embd].
  at::Tensor head(const at::Tensor& hidden) const;
  // Adds an adapter of scope kAll into the weights (model.cpp).
  Status merge(const LoraAdapter& merged);

  // The batch entry point (decode.cpp): checks the batch, groups its tokens
  // by sequence, and runs them as its attention says.
  Result<Decoded> decode(const Batch& batch) const;
  // A checked batch's tokens grouped by sequence: sequence s is
  // ids[first[s] .. first[s] + n[s]), in batch order; `kept` holds the
  // grouped index of each token whose logits are kept, in batch order.
  struct Grouped {
    std::vector<int64_t> ids, first, n, kept;
  };
  // kAppend: each sequence into its cache (model.cpp); returns the kept logits.
  at::Tensor decode_append(const Batch& batch, const Grouped& grouped) const;
  // kBlocks: block attention's encoder (block_encoder.cpp).
  Decoded decode_blocks(const Batch& batch, const Grouped& grouped) const;

  // Recomputing entries in context (recompute.cpp).
  Status recompute(KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int64_t>& entries,
                   const std::vector<int64_t>& positions, const at::Tensor& entry_positions,
                   const RecomputeSelection* selection) const;

  // Branch decoding (branches.cpp).
  Result<BranchCache> new_branches(const KvCache& shared, int64_t branches, int64_t capacity) const;
  Result<at::Tensor> forward_branches(const std::vector<std::vector<int32_t>>& tokens, const KvCache& shared,
                                      BranchCache& branches) const;

  // Training (training.cpp).
  Result<at::Tensor> forward_over(const std::vector<int32_t>& tokens, const KvCache& context, PromptPart part,
                                  int64_t logit_rows) const;
  Result<KvCache> context_kv(const PromptSample& sample, AttentionMask mask, bool blocks_after_prefix) const;

  // kInvalidArgument naming "<what> i" for a token id of row i outside the vocabulary.
  Status check_ids(const std::vector<std::vector<int32_t>>& rows, const std::string& what) const;
  // kInvalidArgument unless `cache` is a KV cache of this model (layers,
  // length, device; padding as check_padding); `what` names it.
  Status check_cache(const KvCache& cache, const std::string& what) const;
  // kInvalidArgument unless cache.padding is undefined or bool [capacity] on
  // the cache's device.
  Status check_padding(const KvCache& cache) const;
  // kUnsupportedArch when the model has sliding-window layers and the cache
  // has padding (its entries are then not its positions, which windows count).
  Status check_window(const KvCache& cache) const;
};

// libtorch reports failures (out of memory above all) by throwing; the public
// API returns them as kBackend.
Error backend_error(const c10::Error& e, const std::string& doing);

// ids as an int64 tensor on `device`.
at::Tensor id_tensor(const std::vector<int64_t>& ids, at::Device device);

}  // namespace kvframe::runtime
