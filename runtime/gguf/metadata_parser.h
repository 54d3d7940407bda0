// Reads the metadata key/value section of a GGUF file.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "byte_reader.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime::gguf_detail {

using Metadata = std::vector<std::pair<std::string, GgufValue>>;

// Reads n_kv entries at the cursor. Errors name the key: kTruncated when the
// file ends inside an entry, kCorrupt for unknown value types, bools other
// than 0/1, nested arrays, counts the file cannot hold and duplicate keys.
Result<Metadata> read_metadata(ParseContext& ctx, uint64_t n_kv);

}  // namespace kvframe::runtime::gguf_detail
