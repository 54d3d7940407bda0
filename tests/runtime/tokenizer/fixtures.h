// The reference fixtures in tests/runtime/tokenizer/fixtures/ (made by the
// make_*_fixture.py scripts next to this file).
#pragma once

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kvframe/runtime_tokenizer/tokenizer.h"

namespace kvframe::test {

inline std::string fixture_path(const std::string& name) {
  return std::string(KVFRAME_SOURCE_DIR) + "/tests/runtime/tokenizer/fixtures/" + name;
}

inline std::string read_fixture(const std::string& name) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline nlohmann::json load_fixture(const std::string& name) { return nlohmann::json::parse(read_fixture(name)); }

// fixtures/strings.json: the texts every *_reference.json indexes.
inline std::vector<std::string> fixture_strings() {
  return load_fixture("strings.json").at("texts").get<std::vector<std::string>>();
}

inline std::vector<runtime::TokenId> ids_of(const nlohmann::json& array) {
  return array.get<std::vector<runtime::TokenId>>();
}

// For failure messages: the text with control characters escaped.
inline std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 120)) {
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return text.size() > 120 ? out + "..." : out;
}

}  // namespace kvframe::test
