// A cursor over the file bytes that never reads past the end: every read
// reports whether the bytes were there, and the caller turns a `false` into
// an Error naming what it was reading.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "kvframe/common/error.h"

namespace kvframe::runtime::gguf_detail {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  uint64_t remaining() const { return size_ - offset_; }

  // Little-endian fixed-size value (GGUF is little-endian, as are our hosts).
  template <class T>
  bool read(T& out) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (remaining() < sizeof(T)) return false;
    std::memcpy(&out, data_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    return true;
  }

  // A GGUF string: u64 length, then that many bytes (not NUL-terminated).
  // The length is checked against what remains before anything is allocated.
  bool read_string(std::string& out) {
    uint64_t length = 0;
    if (!read(length) || length > remaining()) return false;
    out.assign(reinterpret_cast<const char*>(data_ + offset_), static_cast<std::size_t>(length));
    offset_ += length;
    return true;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t offset_ = 0;
};

// How many elements to reserve for a declared count that has been checked
// against the file size: a corrupt count in a large file could still ask for
// hundreds of MB up front, so larger vectors grow only as elements are read.
inline std::size_t initial_capacity(uint64_t declared_count) {
  constexpr uint64_t kMaxReserve = 4096;
  return static_cast<std::size_t>(declared_count < kMaxReserve ? declared_count : kMaxReserve);
}

// The reader plus the name the messages give the file.
struct ParseContext {
  ByteReader in;
  std::string source;  // the path, or "<memory>"

  Error error(ErrorCode code, const std::string& what) const {
    return Error{code, source + ": " + what};
  }
  // `inside`: what was being read, e.g. "metadata key 'general.name'".
  Error truncated(const std::string& inside) const {
    return error(ErrorCode::kTruncated, "the file ends (at byte " + std::to_string(in.size()) +
                                            ") inside " + inside +
                                            "; the file is truncated — download it again");
  }
  // A declared count that the remaining bytes cannot hold: a corrupt count,
  // or a file cut short.
  Error too_many(const std::string& what, uint64_t count, uint64_t min_bytes_each) const {
    return error(ErrorCode::kCorrupt,
                 what + " declares " + std::to_string(count) + " entries of at least " +
                     std::to_string(min_bytes_each) + " bytes, but only " +
                     std::to_string(in.remaining()) +
                     " bytes remain; the file is corrupt or truncated — download it again");
  }
};

}  // namespace kvframe::runtime::gguf_detail
