// A read-only memory mapping of a whole file (POSIX mmap), unmapped on
// destruction. Model files are hundreds of MB: mapping lets the OS page in
// only what dequantization touches and share the pages between processes.
#pragma once

#include <cstdint>
#include <string>

#include "kvframe/common/error.h"

namespace kvframe::runtime::gguf_detail {

class MappedFile {
 public:
  // kIo when the file cannot be opened, is not a regular file, or cannot be
  // mapped. An empty file maps to size 0 and data nullptr.
  static Result<MappedFile> open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const uint8_t* data() const { return static_cast<const uint8_t*>(addr_); }
  uint64_t size() const { return size_; }

 private:
  MappedFile(void* addr, uint64_t size) : addr_(addr), size_(size) {}
  void* addr_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace kvframe::runtime::gguf_detail
