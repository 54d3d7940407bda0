#include "device.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>

namespace kvframe::runtime {

Result<at::Device> parse_device(const std::string& name) {
  if (name == "cpu") return at::Device(at::kCPU);
  if (name.rfind("cuda", 0) != 0) {
    return Error{ErrorCode::kInvalidArgument, "device '" + name + "' is not cpu, cuda or cuda:N"};
  }
  if (!at::hasCUDA()) {
    return Error{ErrorCode::kDeviceUnavailable,
                 "this build's libtorch has no CUDA (or no GPU is visible); use --device cpu, or build "
                 "against a CUDA libtorch with -DKVFRAME_LIBTORCH=$(python3 -c 'import torch; "
                 "print(torch.utils.cmake_prefix_path)')"};
  }
  try {
    at::Device device(name);
    if (device.has_index() && device.index() >= static_cast<int>(at::detail::getCUDAHooks().getNumGPUs())) {
      return Error{ErrorCode::kDeviceUnavailable, "no GPU " + name + " on this machine"};
    }
    return device;
  } catch (const std::exception&) {
    return Error{ErrorCode::kInvalidArgument, "device '" + name + "' is not cpu, cuda or cuda:N"};
  }
}

bool cpu_has_fast_bf16() {
#if defined(__x86_64__)
  // oneDNN, behind libtorch's bf16 matmuls, runs them on these natively
  // (4-8x fp32's speed here); without them bf16 is emulated and slower.
#if defined(__clang__) && __clang_major__ < 16
  // Older clang knows no "amx-bf16" feature string (the fuzz builds use
  // Debian's clang 14); every CPU with AMX-BF16 has AVX-512-BF16 as well.
  static const bool has = __builtin_cpu_supports("avx512bf16");
#else
  static const bool has = __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
#endif
  return has;
#else
  return false;
#endif
}

Result<at::ScalarType> parse_dtype(const std::string& name, const at::Device& device) {
  if (name.empty()) return device.is_cuda() || cpu_has_fast_bf16() ? at::kBFloat16 : at::kFloat;
  if (name == "fp32") return at::kFloat;
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp16") {
    if (!device.is_cuda()) {
      return Error{ErrorCode::kInvalidArgument, "fp16 runs on CUDA only (libtorch's CPU matmuls lack it); use bf16 or fp32 on the CPU"};
    }
    return at::kHalf;
  }
  return Error{ErrorCode::kInvalidArgument, "dtype '" + name + "' is not fp32, bf16 or fp16"};
}

}  // namespace kvframe::runtime
