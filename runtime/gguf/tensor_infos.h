// Reads the tensor info section of a GGUF file and places each tensor's data.
#pragma once

#include <vector>

#include "byte_reader.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime::gguf_detail {

// Reads n_tensors infos at the cursor: name, dims (1 to 4, each >= 1, the
// product within int64), a type ggml_type_size() can size, a row length that
// is a whole number of blocks, and the offset. Fills nbytes; data stays null.
Result<std::vector<GgufTensorInfo>> read_tensor_infos(ParseContext& ctx, uint64_t n_tensors);

// Checks each tensor's offset is a multiple of `alignment`, that its data lies
// inside the file and overlaps no other tensor's, then points data into
// `file` (the whole file; data_start: where the data section begins).
Status place_tensors(const ParseContext& ctx, const uint8_t* file, uint64_t data_start,
                     uint64_t alignment, std::vector<GgufTensorInfo>& tensors);

}  // namespace kvframe::runtime::gguf_detail
