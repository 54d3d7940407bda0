// The model's one forward pass. Every way through the model — a prefill or a
// decoding step into a KV cache (model.cpp), block attention's encoder
// (block_encoder.cpp), batched branches (branches.cpp), training
// (training.cpp) and the CPU's decoding steps (cpu_step.cpp) — runs
// forward_layers() (forward_pass.cpp), one layer loop:
//
//   x = embed(ids)                                  (times sqrt(n_embd): Gemma 3)
//   per layer:  q, k, v = Wqkv · rms(x)            (+ the adapter, when it applies)
//               q, k = rms(q), rms(k) per head       (Qwen3, Gemma 3)
//               x += Wo · attend(l, rope_l(q), rope_l(k), v)
//               x += Wdown · (act(Wgate · rms(x)) * Wup · rms(x))
//   act is silu (SwiGLU) or tanh-GELU (Gemma's GeGLU); Gemma 3 also
//   RMS-norms each residual branch before adding it, and its local layers
//   rotate at a RoPE base of their own and see a sliding window of keys
//   (the plan's to apply: ModelConfig::window).
//
// The loop is written once over a kernel backend, as llama.cpp runs one graph
// on several backends: TorchKernels (torch_kernels.h) computes each step with
// libtorch ops on any device, for packed batches of any length and for
// training; StepKernels (step_kernels.h) computes a few tokens' step on the
// CPU with quant_matrix.h's kernels over the file's own quantized blocks,
// where libtorch's per-op dispatch would cost more than the arithmetic.
// What differs between the libtorch paths is only the attention plan: which
// keys each token may see, at which positions, and where its keys and values
// go.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "kvframe/runtime/model.h"

namespace kvframe::runtime {

class AttentionPlan {
 public:
  virtual ~AttentionPlan() = default;
  // Layer l's attention for the packed tokens: q [T, H, d] and k [T, KH, d]
  // rotated at the tokens' positions (in one pass over both), k_raw the keys
  // before RoPE (for a plan that stores them, or places them elsewhere),
  // v [T, KH, d]. Returns [T, H d], or an undefined tensor to end the pass
  // after this layer's keys and values (block encoding needs nothing more of
  // the last layer).
  virtual at::Tensor attend(int64_t layer, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                            const at::Tensor& v) = 0;
  // Asked after attend(layer): undefined when every token goes on, else the
  // int64 indices (ascending, into this layer's T rows) of the tokens that
  // go on — attend() then returned those rows only. A plan that refreshes
  // some tokens through every layer but only needs the others' first layers
  // (the block engine's deviation-selected recompute) narrows the pass here.
  virtual at::Tensor rows_after(int64_t /*layer*/) { return {}; }
};

// A layer's two norms and four (fused) projections, as the loop names them
// to its backend.
enum class Norm { kAttention, kFeedForward, kPostAttention, kPostFeedForward };
enum class Projection { kQkv, kOutput, kGateUp, kDown };

// The loop over the config's layers on a kernel backend K, which supplies:
//   K::Rows                       the tokens' activations, one row a token
//   embed()                       the tokens' embeddings (scaled)
//   rms_norm(x, l, norm)          layer l's RMS norm of x
//   project(x, l, projection)     x W^T (+ bias) (+ the adapter's update)
//   qk_norm(qkv, l)               each Q and K head of qkv RMS-normed
//   rope(qkv, l)                  queries and keys rotated at their positions,
//                                 with layer l's base
//   attend(l, rotated)            the attention's output, or an ended() value
//                                 when the pass stops after layer l's keys
//   keep_rows(x, l)               x's rows the pass goes on with
//   add_projection(x, y, l, p)    x + project(y, l, p)
//   add_normed(x, y, l, norm)     x + rms_norm(y, l, norm)
//   gated(gate_up)                act(gate) * up
// Returns the last hidden states (or those of the layer where it ended).
template <class K>
typename K::Rows forward_layers(K& kernels, const ModelConfig& config);

}  // namespace kvframe::runtime
