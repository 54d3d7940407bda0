// Tests write GGUF files with the runtime's writer (kvframe/runtime_gguf/gguf_writer.h).
#pragma once

#include <string>
#include <variant>

#include "kvframe/runtime_gguf/gguf.h"
#include "kvframe/runtime_gguf/gguf_writer.h"

namespace kvframe::test {

using runtime::fp32_to_bf16;
using runtime::fp32_to_fp16;
using runtime::GgufValueType;
using runtime::GgufWriter;

// Writes `file`'s scalar metadata (strings, integers, floats) into w, but
// the key `skip`: tests rebuild a file with one thing changed.
inline void copy_scalar_metadata(const runtime::GgufFile& file, GgufWriter& w, const std::string& skip = "") {
  for (const auto& [key, value] : file.metadata()) {
    if (key == skip) continue;
    if (const auto* s = std::get_if<std::string>(&value)) {
      w.add_string(key, *s);
    } else if (const auto* i = std::get_if<int64_t>(&value)) {
      w.add_i32(key, static_cast<int32_t>(*i));
    } else if (const auto* u = std::get_if<uint64_t>(&value)) {
      w.add_u32(key, static_cast<uint32_t>(*u));
    } else if (const auto* d = std::get_if<double>(&value)) {
      w.add_f32(key, static_cast<float>(*d));
    }
  }
}

}  // namespace kvframe::test
