// Parses a whole GGUF file held in memory (mapped or copied): header,
// metadata, tensor infos, tensor placement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metadata_parser.h"

namespace kvframe::runtime::gguf_detail {

struct ParsedGguf {
  uint32_t version = 0;
  uint64_t alignment = 0;
  Metadata metadata;
  std::vector<GgufTensorInfo> tensors;  // data points into the parsed bytes
};

// `source` names the file in error messages.
Result<ParsedGguf> parse_gguf(const uint8_t* data, uint64_t size, const std::string& source);

}  // namespace kvframe::runtime::gguf_detail
