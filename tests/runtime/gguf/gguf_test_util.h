// Helpers shared by the GGUF unit tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguf_writer.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

inline Result<GgufFile> parse_bytes(const std::vector<uint8_t>& bytes, std::size_t size) {
  return GgufFile::parse(bytes.data(), size);
}
inline Result<GgufFile> parse_bytes(const std::vector<uint8_t>& bytes) {
  return parse_bytes(bytes, bytes.size());
}

// Success when `result` failed with `code` and a message containing `text`.
template <class T>
::testing::AssertionResult fails_with(const Result<T>& result, ErrorCode code,
                                      const std::string& text) {
  if (result.ok()) return ::testing::AssertionFailure() << "parsed without error";
  const Error& error = result.error();
  if (error.code != code || error.message.find(text) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "got \"" << error.to_string() << "\", expected code " << error_code_name(code)
           << " and a message containing \"" << text << "\"";
  }
  return ::testing::AssertionSuccess();
}

// Overwrites a little-endian value inside a file image.
template <class T>
void patch(std::vector<uint8_t>& bytes, std::size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// Header layout: magic, version (u32), tensor count (u64), metadata count (u64).
constexpr std::size_t kVersionOffset = 4;
constexpr std::size_t kTensorCountOffset = 8;
constexpr std::size_t kMetadataCountOffset = 16;
constexpr std::size_t kFirstEntryOffset = 24;

// Where the value of the first metadata entry starts, given its key.
inline std::size_t first_value_offset(const std::string& key) {
  return kFirstEntryOffset + 8 + key.size() + 4;
}

}  // namespace kvframe::runtime
