// Loading a model's tensors out of a GGUF file into libtorch tensors.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "forward_pass.h"
#include "kvframe/runtime/model.h"

namespace kvframe::runtime {

// One decoder layer. Projections that read the same input are fused at load
// (Q|K|V, gate|up) so each costs one matmul; torch layout [out, in].
struct LayerWeights {
  at::Tensor attn_norm;  // [n_embd]
  at::Tensor wqkv;       // [(n_head + 2 n_head_kv) head_dim, n_embd]; Q/K rows in rope.h's layout
  at::Tensor bqkv;       // [(n_head + 2 n_head_kv) head_dim] or undefined
  at::Tensor wo;         // [n_embd, n_head head_dim]
  at::Tensor ffn_norm;   // [n_embd]
  at::Tensor w_gate_up;  // [2 n_ff, n_embd]
  at::Tensor w_down;     // [n_embd, n_ff]
  // Present only where the architecture has them (ModelConfig), else undefined.
  at::Tensor q_norm, k_norm;                  // [head_dim]: qk_norm
  at::Tensor post_attn_norm, post_ffn_norm;  // [n_embd]: post_norms
  const at::Tensor& norm(Norm which) const {
    switch (which) {
      case Norm::kAttention: return attn_norm;
      case Norm::kFeedForward: return ffn_norm;
      case Norm::kPostAttention: return post_attn_norm;
      case Norm::kPostFeedForward: break;
    }
    return post_ffn_norm;
  }
};

// The matrices (embed, output, and each layer's wqkv, wo, w_gate_up and
// w_down) are undefined where the CPU reads them as stored (cpu_step.h).
struct Weights {
  at::Tensor embed;        // [n_vocab, n_embd]
  at::Tensor output_norm;  // [n_embd]
  at::Tensor output;       // [n_vocab, n_embd]; the same tensor as embed when tied
  std::vector<LayerWeights> layers;
};

// Whether load_weights() makes dense copies of the matrices (embeddings,
// projections, output) or leaves them undefined for the CPU's quant_matrix.h,
// which reads the file's blocks in place.
enum class Matrices { kDense, kAsStored };

// Checks every tensor's presence, shape and type, dequantizes it (in parallel,
// on the CPU) and moves it to device in dtype; matrices as `matrices` says.
// Norm weights stay fp32.
Result<Weights> load_weights(const GgufFile& file, const ModelConfig& config, at::Device device,
                             at::ScalarType dtype, Matrices matrices,
                             const std::function<void(int64_t, int64_t)>& on_progress);

// Leaves the matrices undefined (see Weights): once the CPU reads them from
// another copy, the dense one goes.
void drop_dense_matrices(Weights& weights);

// Random weights of the config's shapes, made directly on the device.
Weights random_weights(const ModelConfig& config, at::Device device, at::ScalarType dtype, uint64_t seed);

// The GGUF converter reorders each 'llama' Q/K head's rows so rotation pairs
// are interleaved (2i, 2i+1); this restores the half-split order (i, i + d/2)
// of rope.h. rows: [n_heads * head_dim, ...] (a weight or a bias).
at::Tensor unpermute_rope_rows(const at::Tensor& rows, int64_t n_heads, int64_t head_dim);
// Its inverse: half-split order back to the file's interleaved one (writing adapters).
at::Tensor permute_rope_rows(const at::Tensor& rows, int64_t n_heads, int64_t head_dim);
// Partial rotary's row order for the fused Q|K|V rows (rope.h): row r of the
// loop's wqkv is row order[r] of the file's; empty when every dimension rotates.
std::vector<int64_t> partial_rotary_order(const ModelConfig& config);

}  // namespace kvframe::runtime
