// The C ABI's structs carry their caller's size (struct_size, first field):
// a caller built against an older header passes a shorter struct, one built
// against a newer header a longer one. These fill a caller's params struct
// with defaults, read one into the library's layout (the fields it lacks at
// their defaults), and write the library's struct into as much of the
// caller's as it has room for.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "kvframe/client/kvframe_client.h"

namespace kvframe::client {

// Each struct's size when struct_size came in (0.3.0): the least a caller
// may pass. A struct that gains a field keeps its entry here, the old size.
template <class T>
constexpr std::size_t kFirstSize = sizeof(T);
template <>
constexpr std::size_t kFirstSize<kvf_session_params> = offsetof(kvf_session_params, adapter);
template <>
constexpr std::size_t kFirstSize<kvf_server_info> = offsetof(kvf_server_info, adapters);

// Larger than any struct will grow: a bigger struct_size is garbage, not a
// newer caller.
constexpr std::size_t kMostStructSize = 64 * 1024;

template <class T>
bool size_is_valid(std::size_t size) {
  return size >= kFirstSize<T> && size <= kMostStructSize;
}

template <class T>
bool size_is_valid(const T& sized, const char* type, std::string* problem) {
  if (size_is_valid<T>(sized.struct_size)) return true;
  *problem = std::string(type) + ".struct_size is " + std::to_string(sized.struct_size) + ": set it to sizeof(" +
             type + ") (the kvf_*_params_init functions do)";
  return false;
}

// `defaults` into the caller's struct of `size` bytes (already checked by
// size_is_valid): as many of them as it has room for, and zeros past the
// fields this library knows, which is every newer field's default.
template <class T>
void init_sized(T defaults, T* out, std::size_t size) {
  defaults.struct_size = static_cast<uint32_t>(size);
  std::memset(static_cast<void*>(out), 0, size);
  std::memcpy(static_cast<void*>(out), &defaults, std::min(size, sizeof(T)));
}

// A caller built against a newer header may set fields this library lacks:
// any nonzero byte past sizeof(T) is one (their defaults are zeros), refused
// rather than silently ignored. `in` has been checked by size_is_valid.
template <class T>
bool newer_fields_unset(const T& in, const char* type, std::string* problem) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&in);
  for (std::size_t at = sizeof(T); at < in.struct_size; ++at) {
    if (bytes[at] == 0) continue;
    *problem = std::string(type) + " has a field set at byte " + std::to_string(at) + ", past the " +
               std::to_string(sizeof(T)) + " bytes libkvframe_client " + std::to_string(KVF_VERSION_MAJOR) + "." +
               std::to_string(KVF_VERSION_MINOR) + "." + std::to_string(KVF_VERSION_PATCH) +
               " knows: an option newer than this library (update it, or leave the option unset)";
    return false;
  }
  return true;
}

// `in` (struct_size bytes) over `defaults`; fields past the caller's struct
// keep their defaults. A caller's struct larger than ours (a newer header)
// contributes only the fields this library knows.
template <class T>
T read_sized(const T& in, T defaults) {
  std::memcpy(static_cast<void*>(&defaults), &in, std::min<std::size_t>(in.struct_size, sizeof(T)));
  defaults.struct_size = sizeof(T);
  return defaults;
}

// `value` into the caller's `out`, no more than its struct_size bytes; its
// struct_size stays the caller's.
template <class T>
void write_sized(T value, T* out) {
  const std::size_t room = std::min<std::size_t>(out->struct_size, sizeof(T));
  value.struct_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &value, room);
}

}  // namespace kvframe::client
