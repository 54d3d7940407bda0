// The model's one forward pass (see forward_pass.h), read top to bottom, and
// its two backends' instances.
#include "forward_pass.h"

#include "step_kernels.h"
#include "torch_kernels.h"

namespace kvframe::runtime {

template <class K>
typename K::Rows forward_layers(K& kernels, int64_t n_layer) {
  typename K::Rows x = kernels.embed();
  for (int64_t l = 0; l < n_layer; ++l) {
    auto qkv = kernels.project(kernels.rms_norm(x, l, Norm::kAttention), l, Projection::kQkv);
    auto attended = kernels.attend(l, kernels.rope(qkv));
    if (K::ended(attended)) break;  // the plan needs nothing past this layer's keys and values
    x = kernels.keep_rows(x, l);
    x = kernels.add_projection(x, attended, l, Projection::kOutput);

    // SwiGLU feed-forward.
    auto gate_up = kernels.project(kernels.rms_norm(x, l, Norm::kFeedForward), l, Projection::kGateUp);
    x = kernels.add_projection(x, kernels.swiglu(gate_up), l, Projection::kDown);
  }
  return x;
}

template Model::Impl::TorchKernels::Rows forward_layers(Model::Impl::TorchKernels&, int64_t);
template Model::Impl::StepKernels::Rows forward_layers(Model::Impl::StepKernels&, int64_t);

}  // namespace kvframe::runtime
