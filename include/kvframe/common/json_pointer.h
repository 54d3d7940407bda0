// One reference token of an RFC 6901 JSON Pointer ("/units/hp~1max"): how
// errors name the place in a frame or a schema that they are about.
#pragma once

#include <string>
#include <string_view>

namespace kvframe::common {

// Appends `key` with '~' written "~0" and '/' written "~1".
inline void append_json_pointer_token(std::string& out, std::string_view key) {
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
}

inline std::string json_pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  append_json_pointer_token(out, key);
  return out;
}

}  // namespace kvframe::common
