#include "path_rules.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "path.h"

namespace kvframe::json_blocker::detail {
namespace {

// Beyond 15 decimals a double no longer holds the digits it would print.
constexpr int kMaxRoundDigits = 15;

// How errors name an entry: quantize[1] ("grid[*][*]").
std::string entry_name(const char* list, std::size_t index, const std::string& path) {
  std::string name = std::string(list) + "[" + std::to_string(index) + "]";
  if (!path.empty()) {
    name += " (";
    append_quoted(name, path);
    name += ")";
  }
  return name;
}

std::string number_text(double value) {
  char text[64];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

// Reads a list of entries, each an object with a "path" string; `read_entry`
// reads the entry's fields (path aside) and returns an error message, empty
// when fine.
template <class Rule, class ReadEntry>
Result<std::vector<Rule>> read_entries(simdjson::dom::element value, const char* list,
                                       const char* example, ReadEntry read_entry) {
  simdjson::dom::array array;
  if (value.get_array().get(array)) {
    return rules_error(std::string("\"") + list + "\" must be a list of entries like " + example);
  }
  std::vector<Rule> rules;
  for (simdjson::dom::element item : array) {
    const std::size_t index = rules.size();
    simdjson::dom::object object;
    std::string_view path;
    simdjson::dom::element path_value;
    if (item.get_object().get(object) || object.at_key("path").get(path_value) ||
        path_value.get_string().get(path)) {
      return rules_error(entry_name(list, index, "") + " must be an object with a \"path\" string, like " +
                         example);
    }
    Rule rule;
    rule.path = std::string(path);
    const std::string problem = read_entry(object, rule);
    if (!problem.empty()) return rules_error(entry_name(list, index, rule.path) + ": " + problem);
    rules.push_back(std::move(rule));
  }
  return rules;
}

std::string read_quantize_field(std::string_view key, simdjson::dom::element value, Quantize& rule) {
  if (key == "path") return "";
  if (key == "round") {
    std::int64_t digits = 0;
    // Any integer is read; check_quantize says which are allowed.
    if (value.get_int64().get(digits) || digits < -1000 || digits > 1000) {
      return "\"round\" must be a whole number of decimals (0 rounds to integers)";
    }
    rule.round_digits = static_cast<int>(digits);
    return "";
  }
  if (key == "levels") {
    simdjson::dom::array edges;
    if (value.get_array().get(edges)) return "\"levels\" must be a list of numbers (the bucket edges)";
    rule.levels.clear();
    for (simdjson::dom::element edge : edges) {
      double number = 0;
      if (edge.get_double().get(number)) return "\"levels\" must be a list of numbers (the bucket edges)";
      rule.levels.push_back(number);
    }
    return "";
  }
  return "unknown field \"" + std::string(key) + "\" (known: path, round, levels)";
}

std::string read_array_field(std::string_view key, simdjson::dom::element value, ArrayRule& rule) {
  if (key == "cut") {
    std::string_view name;
    if (value.get_string().get(name)) return "\"cut\" must be \"rows\", \"elements\" or \"chunk\"";
    const std::optional<ArrayCut> cut = value_of_name(kArrayCutNames, name);
    if (!cut) return "\"cut\" must be \"rows\", \"elements\" or \"chunk\", not \"" + std::string(name) + "\"";
    rule.cut = *cut;
    return "";
  }
  if (key == "chunk") {
    std::int64_t size = 0;
    // Any integer is read; check_array_rules says which are allowed.
    if (value.get_int64().get(size) || size < 0 || size > 0x7fffffff) {
      return "\"chunk\" must be a count of elements per block (at least 1)";
    }
    rule.chunk = static_cast<std::size_t>(size);
    return "";
  }
  if (key == "path") return "";
  return "unknown field \"" + std::string(key) + "\" (known: path, cut, chunk)";
}

std::string read_quantize_entry(simdjson::dom::object object, Quantize& rule) {
  for (auto field : object) {
    std::string problem = read_quantize_field(field.key, field.value, rule);
    if (!problem.empty()) return problem;
  }
  return "";
}

std::string read_array_entry(simdjson::dom::object object, ArrayRule& rule) {
  for (auto field : object) {
    std::string problem = read_array_field(field.key, field.value, rule);
    if (!problem.empty()) return problem;
  }
  // "chunk" alone says the cut; with "cut": "rows" it is a contradiction
  // check_array_rules reports.
  simdjson::dom::element unused;
  if (object.at_key("chunk").get(unused) == simdjson::SUCCESS &&
      object.at_key("cut").get(unused) != simdjson::SUCCESS) {
    rule.cut = ArrayCut::kChunk;
  }
  return "";
}

Status check_path(const char* list, std::size_t index, const std::string& path) {
  auto pattern = Pattern::parse(path);
  if (pattern) return {};
  return rules_error(entry_name(list, index, path) + ": " + pattern.error().message);
}

}  // namespace

Error rules_error(const std::string& what) {
  return Error{ErrorCode::kInvalidRules, 0, "rules: " + what};
}

Result<std::vector<Quantize>> read_quantize(simdjson::dom::element value) {
  return read_entries<Quantize>(value, "quantize", R"({"path": "grid[*][*]", "round": 0})",
                                read_quantize_entry);
}

Result<std::vector<ArrayRule>> read_array_rules(simdjson::dom::element value) {
  return read_entries<ArrayRule>(value, "arrays", R"({"path": "grid", "cut": "rows"})",
                                 read_array_entry);
}

Status check_quantize(const std::vector<Quantize>& rules) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const Quantize& rule = rules[i];
    if (Status checked = check_path("quantize", i, rule.path); !checked.ok()) return checked;
    const std::string name = entry_name("quantize", i, rule.path) + ": ";
    if (rule.round_digits.has_value() == !rule.levels.empty()) {
      return rules_error(name + "give either \"round\" (decimals) or \"levels\" (bucket edges), not " +
                         (rule.levels.empty() ? "neither" : "both"));
    }
    if (rule.round_digits && (*rule.round_digits < 0 || *rule.round_digits > kMaxRoundDigits)) {
      return rules_error(name + "\"round\" must be 0.." + std::to_string(kMaxRoundDigits) +
                         " decimals, not " + std::to_string(*rule.round_digits) +
                         " (for coarser steps use \"levels\")");
    }
    for (std::size_t k = 0; k < rule.levels.size(); ++k) {
      if (!std::isfinite(rule.levels[k])) return rules_error(name + "\"levels\" must be finite numbers");
      if (k > 0 && !(rule.levels[k - 1] < rule.levels[k])) {
        return rules_error(name + "\"levels\" must be strictly ascending, but " +
                           number_text(rule.levels[k]) + " follows " + number_text(rule.levels[k - 1]));
      }
    }
  }
  return {};
}

Status check_array_rules(const std::vector<ArrayRule>& rules) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const ArrayRule& rule = rules[i];
    if (Status checked = check_path("arrays", i, rule.path); !checked.ok()) return checked;
    const std::string name = entry_name("arrays", i, rule.path) + ": ";
    if (rule.cut == ArrayCut::kChunk && rule.chunk == 0) {
      return rules_error(name + "\"chunk\" must be at least 1 element per block");
    }
    if (rule.cut != ArrayCut::kChunk && rule.chunk != 0) {
      return rules_error(name + "\"chunk\" goes only with cut \"chunk\", not \"" +
                         array_cut_name(rule.cut) + "\"");
    }
  }
  return {};
}

}  // namespace kvframe::json_blocker::detail
