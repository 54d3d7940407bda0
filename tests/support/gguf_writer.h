// Tests write GGUF files with the runtime's writer (kvframe/runtime_gguf/gguf_writer.h).
#pragma once

#include "kvframe/runtime_gguf/gguf_writer.h"

namespace kvframe::test {

using runtime::fp32_to_bf16;
using runtime::fp32_to_fp16;
using runtime::GgufValueType;
using runtime::GgufWriter;

}  // namespace kvframe::test
