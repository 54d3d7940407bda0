// The model's one forward pass (see forward_pass.h), read top to bottom, and
// its two backends' instances.
#include "forward_pass.h"

#include "step_kernels.h"
#include "torch_kernels.h"

namespace kvframe::runtime {

template <class K>
typename K::Rows forward_layers(K& kernels, const ModelConfig& config) {
  typename K::Rows x = kernels.embed();
  for (int64_t l = 0; l < config.n_layer; ++l) {
    auto qkv = kernels.project(kernels.rms_norm(x, l, Norm::kAttention), l, Projection::kQkv);
    if (config.qk_norm) qkv = kernels.qk_norm(qkv, l);
    auto attended = kernels.attend(l, kernels.rope(qkv, l));
    if (K::ended(attended)) break;  // the plan needs nothing past this layer's keys and values
    x = kernels.keep_rows(x, l);
    if (config.post_norms) {
      x = kernels.add_normed(x, kernels.project(attended, l, Projection::kOutput), l, Norm::kPostAttention);
    } else {
      x = kernels.add_projection(x, attended, l, Projection::kOutput);
    }

    // Gated feed-forward.
    auto gate_up = kernels.project(kernels.rms_norm(x, l, Norm::kFeedForward), l, Projection::kGateUp);
    if (config.post_norms) {
      x = kernels.add_normed(x, kernels.project(kernels.gated(gate_up), l, Projection::kDown), l,
                             Norm::kPostFeedForward);
    } else {
      x = kernels.add_projection(x, kernels.gated(gate_up), l, Projection::kDown);
    }
  }
  return x;
}

template Model::Impl::TorchKernels::Rows forward_layers(Model::Impl::TorchKernels&, const ModelConfig&);
template Model::Impl::StepKernels::Rows forward_layers(Model::Impl::StepKernels&, const ModelConfig&);

}  // namespace kvframe::runtime
