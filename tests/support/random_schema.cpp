#include "random_schema.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvframe::test {
namespace {

// Names and strings that exercise escaping and UTF-8 in literals.
const std::vector<std::string> kWords = {
    "a", "name", "action", "x y", "caf\xC3\xA9", "quo\"te", "back\\slash", "tab\t", "\xE2\x82\xAC", "emoji\xF0\x9F\x98\x80",
    "", "fold", "call", "raise", "n1", "slash/"};

// A JSON string literal. Throws on invalid UTF-8: in an output that is
// itself a failure (the schema's strings are strict UTF-8).
std::string json_string(const std::string& text) { return nlohmann::json(text).dump(); }

class Generator {
 public:
  Generator(std::mt19937_64& rng, const RandomSchemaOptions& options) : rng_(rng), options_(options) {}

  std::string schema(int depth) {
    const int kinds = depth < options_.max_depth ? 12 : 8;
    switch (pick(kinds)) {
      case 0: return string_schema();
      case 1: return integer_schema();
      case 2: return number_schema();
      case 3: return R"({"type":"boolean"})";
      case 4: return R"({"type":"null"})";
      case 5: return enum_schema();
      case 6: return const_schema();
      case 7: return nullable_schema();
      case 8:
      case 9: return object_schema(depth);
      case 10: return array_schema(depth);
      default: return any_of_schema(depth);
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin() { return pick(2) == 0; }
  const std::string& word() { return kWords[static_cast<size_t>(pick(static_cast<int>(kWords.size())))]; }

  std::string string_schema() {
    std::string s = R"({"type":"string")";
    int min = 0;
    if (coin()) {
      min = pick(4);
      s += ",\"minLength\":" + std::to_string(min);
    }
    if (coin()) s += ",\"maxLength\":" + std::to_string(min + pick(12));
    return s + "}";
  }

  int64_t integer_bound() {
    static const std::vector<int64_t> kSpecial = {0, 1, -1, 9, 10, 99, 100, -100, 1000, 65535,
                                                  INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
    if (coin()) return kSpecial[static_cast<size_t>(pick(static_cast<int>(kSpecial.size())))];
    return std::uniform_int_distribution<int64_t>(-5000, 5000)(rng_);
  }

  std::string integer_schema() {
    int64_t lo = integer_bound(), hi = integer_bound();
    if (lo > hi) std::swap(lo, hi);
    std::string s = R"({"type":"integer")";
    // Exclusive bounds need room: an empty range is an invalid schema.
    const bool exclusive = hi != INT64_MAX && lo != INT64_MIN &&
                           static_cast<double>(hi) - static_cast<double>(lo) >= 2 && coin();
    if (coin()) s += std::string(exclusive ? ",\"exclusiveMinimum\":" : ",\"minimum\":") + std::to_string(lo);
    if (coin()) s += std::string(exclusive ? ",\"exclusiveMaximum\":" : ",\"maximum\":") + std::to_string(hi);
    return s + "}";
  }

  std::string decimal() {
    static const std::vector<std::string> kSpecial = {"0", "0.5", "-0.5", "1.25", "-1000.125", "0.1", "2.000001", "1e3",
                                                      "-7", "12345.6789", "0.3"};
    if (coin()) return kSpecial[static_cast<size_t>(pick(static_cast<int>(kSpecial.size())))];
    return std::to_string(std::uniform_int_distribution<int>(-2000, 2000)(rng_)) + "." + std::to_string(pick(1000));
  }

  std::string number_schema() {
    std::string a = decimal(), b = decimal();
    if (std::stod(a) > std::stod(b)) std::swap(a, b);
    std::string s = R"({"type":"number")";
    const bool exclusive = std::stod(b) - std::stod(a) > 0.01 && coin();
    if (coin()) s += std::string(exclusive ? ",\"exclusiveMinimum\":" : ",\"minimum\":") + a;
    if (coin()) s += std::string(exclusive ? ",\"exclusiveMaximum\":" : ",\"maximum\":") + b;
    return s + "}";
  }

  std::string literal() {
    switch (pick(6)) {
      case 0: return json_string(word());
      case 1: return std::to_string(integer_bound());
      case 2: return decimal();
      case 3: return coin() ? "true" : "false";
      case 4: return "null";
      default: return "{" + json_string(word()) + ":[1,\"x\"]}";
    }
  }

  std::string enum_schema() {
    if (coin()) {  // a typed string enum, the common case
      std::string s = R"({"type":"string","enum":[)";
      const int n = 1 + pick(4);
      for (int i = 0; i < n; ++i) s += (i ? "," : "") + json_string(word());
      return s + "]}";
    }
    std::string s = R"({"enum":[)";
    const int n = 1 + pick(4);
    for (int i = 0; i < n; ++i) s += (i ? "," : "") + literal();
    return s + "]}";
  }

  std::string const_schema() { return "{\"const\":" + literal() + "}"; }

  std::string nullable_schema() {
    return coin() ? R"({"type":["string","null"],"maxLength":5})" : R"({"type":["integer","boolean"],"minimum":-3,"maximum":3})";
  }

  std::string object_schema(int depth) {
    std::vector<std::string> names;
    const int n = pick(options_.max_properties + 1);
    for (int i = 0; i < n; ++i) {
      const std::string& w = word();
      if (std::find(names.begin(), names.end(), w) == names.end()) names.push_back(w);
    }
    std::string s = R"({"type":"object","properties":{)";
    std::string required;
    for (size_t i = 0; i < names.size(); ++i) {
      s += (i ? "," : "") + json_string(names[i]) + ":" + schema(depth + 1);
      if (coin()) required += (required.empty() ? "" : ",") + json_string(names[i]);
    }
    s += "}";
    if (!required.empty()) s += ",\"required\":[" + required + "]";
    if (coin()) s += ",\"additionalProperties\":false";
    return s + "}";
  }

  std::string array_schema(int depth) {
    std::string s = R"({"type":"array","items":)" + schema(depth + 1);
    int min = 0;
    if (coin()) {
      min = pick(3);
      s += ",\"minItems\":" + std::to_string(min);
    }
    if (coin()) s += ",\"maxItems\":" + std::to_string(min + pick(options_.max_items + 1));
    return s + "}";
  }

  std::string any_of_schema(int depth) {
    std::string s = R"({"anyOf":[)";
    const int n = 2 + pick(2);
    for (int i = 0; i < n; ++i) s += (i ? "," : "") + schema(depth + 1);
    return s + "]}";
  }

  std::mt19937_64& rng_;
  const RandomSchemaOptions& options_;
};

}  // namespace

std::string random_schema(std::mt19937_64& rng, const RandomSchemaOptions& options) {
  return Generator(rng, options).schema(0);
}

SchemaOutputLog::SchemaOutputLog(std::string path) : path_(std::move(path)), out_(path_) {}

void SchemaOutputLog::add(const std::string& schema_json, const std::string& output) {
  out_ << "{\"schema\":" << schema_json << ",\"output\":" << json_string(output) << "}\n";
  ++size_;
}

bool SchemaOutputLog::all_valid() {
  out_.flush();
  const std::string command =
      "/usr/bin/python3 " KVFRAME_SOURCE_DIR "/tests/runtime/output/validate_outputs.py '" + path_ + "'";
  return std::system(command.c_str()) == 0;
}

}  // namespace kvframe::test
