// Device and dtype selection shared by everything that places tensors.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "kvframe/common/error.h"

namespace kvframe::runtime {

// "cpu", "cuda" or "cuda:N". kDeviceUnavailable when this libtorch has no CUDA
// or the machine has no such GPU (the message says how to get one);
// kInvalidArgument for anything else.
Result<at::Device> parse_device(const std::string& name);

// "fp32", "bf16", "fp16"; empty: the fastest the device runs well — bf16 on
// CUDA and on CPUs with AVX-512-BF16 or AMX, else fp32. kInvalidArgument otherwise.
bool cpu_has_fast_bf16();
Result<at::ScalarType> parse_dtype(const std::string& name, const at::Device& device);

}  // namespace kvframe::runtime
