// Sample GGUF contents shared by the GGUF tests and the fuzz corpus writer.
#pragma once

#include <cstdint>

#include "gguf_writer.h"

namespace kvframe::test {

// A small file holding every metadata value type (scalars and arrays) and one
// tensor of every tensor type we dequantize, and Q8_1 (sized, not dequantized).
GgufWriter every_type_sample(uint32_t version = 3, uint64_t alignment = 32);

}  // namespace kvframe::test
