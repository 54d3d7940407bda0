#include "placement.h"

#include <algorithm>
#include <stdexcept>

#ifdef KVFRAME_HAVE_CUDA_KERNELS
#include <c10/core/DeviceGuard.h>

#include "placement_cuda.h"
#endif

namespace kvframe::kv_diff {

bool uses_cuda_kernel(const std::vector<Placement>& placements, const PlacementTarget& target) {
#ifdef KVFRAME_HAVE_CUDA_KERNELS
  const auto dtype = target.k.scalar_type();
  // The kernel rotates every layer at one base: local layers (Gemma 3) go to libtorch.
  if (!target.rope->params().local_layers.empty()) return false;
  if (!target.k.is_cuda() || !target.k.is_contiguous() || !target.v.is_contiguous() ||
      (dtype != at::kFloat && dtype != at::kBFloat16 && dtype != at::kHalf)) {
    return false;
  }
  // The kernel reads sources as they are: same device, dtype and layout as the buffer.
  return std::all_of(placements.begin(), placements.end(), [&](const Placement& p) {
    for (const at::Tensor* t : {&p.src->k, &p.src->v}) {
      if (t->device() != target.k.device() || t->scalar_type() != dtype || !t->is_contiguous()) return false;
    }
    return true;
  });
#else
  (void)placements;
  (void)target;
  return false;
#endif
}

#ifdef KVFRAME_HAVE_CUDA_KERNELS
namespace {

cuda::DType cuda_dtype(at::ScalarType t) {
  if (t == at::kBFloat16) return cuda::DType::kBF16;
  if (t == at::kHalf) return cuda::DType::kF16;
  return cuda::DType::kF32;
}

void apply_placements_cuda(const std::vector<Placement>& placements, const PlacementTarget& target) {
  std::vector<cuda::PlacementDesc> descs;
  descs.reserve(placements.size());
  int64_t max_n = 0;
  for (const Placement& p : placements) {
    const int64_t n = p.src->tokens();
    descs.push_back({p.src->k.data_ptr(), p.src->v.data_ptr(), n, p.offset, p.position, p.write_v ? 1 : 0});
    max_n = std::max(max_n, n);
  }
  const at::Device device = target.k.device();
  const c10::DeviceGuard guard(device);
  // Both allocated through libtorch on its default stream, which the kernel
  // also runs on: the memory is reused only after the kernel has read it.
  const at::Tensor inv_freq = target.rope->inv_freq().to(device);
  const at::Tensor device_descs = at::empty({static_cast<int64_t>(descs.size() * sizeof(cuda::PlacementDesc))},
                                            at::TensorOptions(at::kByte).device(device));
  cuda::LaunchArgs args{};
  args.host_descs = descs.data();
  args.device_descs = static_cast<cuda::PlacementDesc*>(device_descs.data_ptr());
  args.count = static_cast<int64_t>(descs.size());
  args.max_n = max_n;
  args.layer_heads = target.k.size(0) * target.k.size(1);
  args.capacity = target.k.size(2);
  args.head_dim = target.k.size(3);
  args.k = target.k.data_ptr();
  args.v = target.v.data_ptr();
  args.inv_freq = inv_freq.data_ptr<float>();
  args.dtype = cuda_dtype(target.k.scalar_type());
  if (std::string err = cuda::launch_placements(args); !err.empty()) throw std::runtime_error(err);
}

}  // namespace
#endif

void apply_placements(const std::vector<Placement>& placements, const PlacementTarget& target) {
  if (placements.empty()) return;
#ifdef KVFRAME_HAVE_CUDA_KERNELS
  if (uses_cuda_kernel(placements, target)) return apply_placements_cuda(placements, target);
#endif
  apply_placements_torch(placements, target);
}

}  // namespace kvframe::kv_diff
