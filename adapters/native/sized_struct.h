// The C ABI's structs carry their caller's size (struct_size, first field):
// a caller built against an older header passes a shorter struct. These read
// one into the library's layout, the fields it lacks at their defaults, and
// write the library's struct into as much of the caller's as it has room for.
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
bool size_is_valid(const T& sized, const char* type, std::string* problem) {
  if (sized.struct_size >= kFirstSize<T> && sized.struct_size <= kMostStructSize) return true;
  *problem = std::string(type) + ".struct_size is " + std::to_string(sized.struct_size) + ": set it to sizeof(" +
             type + ") (the kvf_*_default_params functions do)";
  return false;
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
