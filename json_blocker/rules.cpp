#include "kvframe/json_blocker/rules.h"

#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "path.h"
#include "path_rules.h"

namespace kvframe::json_blocker {
namespace {

using detail::rules_error;

constexpr NamedValue<BlockOrder> kBlockOrderNames[] = {{BlockOrder::kDocument, "document"},
                                                       {BlockOrder::kVolatileLast, "volatile_last"}};

// Ranges are check_rules()'s business; this bound only keeps casts exact.
constexpr std::uint64_t kMaxCount = 0x7fffffff;

// Reads a non-negative integer field into `out`, bounded by `max`.
template <class T>
bool read_count(simdjson::dom::element value, T& out, std::uint64_t max) {
  std::uint64_t v = 0;
  if (value.get_uint64().get(v) || v > max) return false;
  out = static_cast<T>(v);
  return true;
}

bool read_strings(simdjson::dom::element value, std::vector<std::string>& out) {
  simdjson::dom::array array;
  if (value.get_array().get(array)) return false;
  out.clear();
  for (simdjson::dom::element item : array) {
    std::string_view s;
    if (item.get_string().get(s)) return false;
    out.emplace_back(s);
  }
  return true;
}

Result<Limits> read_limits(simdjson::dom::element value) {
  simdjson::dom::object object;
  if (value.get_object().get(object)) return rules_error("\"limits\" must be an object");
  Limits limits;
  for (auto field : object) {
    bool ok = false;
    if (field.key == "max_document_bytes") {
      ok = read_count(field.value, limits.max_document_bytes, kMaxCount);
    } else if (field.key == "max_nesting") {
      ok = read_count(field.value, limits.max_nesting, kMaxCount);
    } else {
      return rules_error("unknown field \"limits." + std::string(field.key) +
                         "\" (known: max_document_bytes, max_nesting)");
    }
    if (!ok) return rules_error("\"limits." + std::string(field.key) + "\" must be a count");
  }
  return limits;
}

}  // namespace

const char* block_order_name(BlockOrder order) { return name_of_value(kBlockOrderNames, order, "document"); }

const char* array_cut_name(ArrayCut cut) { return name_of_value(detail::kArrayCutNames, cut, "unknown"); }

Result<Rules> parse_rules(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (auto err = parser.parse(padded).get(root)) {
    return rules_error(std::string("not valid JSON (") + simdjson::error_message(err) + ")");
  }
  simdjson::dom::object object;
  if (root.get_object().get(object)) return rules_error("the rules file must hold a JSON object");

  Rules rules;
  for (auto field : object) {
    const std::string key(field.key);
    bool ok = true;
    if (key == "max_depth") {
      ok = read_count(field.value, rules.max_depth, kMaxCount);
    } else if (key == "min_split_bytes") {
      ok = read_count(field.value, rules.min_split_bytes, kMaxCount);
    } else if (key == "max_block_bytes") {
      ok = read_count(field.value, rules.max_block_bytes, kMaxCount);
    } else if (key == "merge_scalar_bytes") {
      ok = read_count(field.value, rules.merge_scalar_bytes, kMaxCount);
    } else if (key == "scalar_array_chunk") {
      ok = read_count(field.value, rules.scalar_array_chunk, kMaxCount);
    } else if (key == "key_fields") {
      ok = read_strings(field.value, rules.key_fields);
    } else if (key == "pin") {
      ok = read_strings(field.value, rules.pin);
    } else if (key == "drop") {
      ok = read_strings(field.value, rules.drop);
    } else if (key == "quantize") {
      auto quantize = detail::read_quantize(field.value);
      if (!quantize) return quantize.error();
      rules.quantize = std::move(quantize).value();
    } else if (key == "arrays") {
      auto arrays = detail::read_array_rules(field.value);
      if (!arrays) return arrays.error();
      rules.arrays = std::move(arrays).value();
    } else if (key == "order") {
      std::string_view name;
      const std::optional<BlockOrder> order =
          field.value.get_string().get(name) ? std::nullopt : value_of_name(kBlockOrderNames, name);
      if (!order) return rules_error("field \"order\" must be \"document\" or \"volatile_last\"");
      rules.order = *order;
    } else if (key == "limits") {
      auto limits = read_limits(field.value);
      if (!limits) return limits.error();
      rules.limits = limits.value();
    } else {
      return rules_error("unknown field \"" + key +
                         "\" (known: max_depth, min_split_bytes, max_block_bytes, "
                         "merge_scalar_bytes, scalar_array_chunk, key_fields, pin, drop, "
                         "quantize, arrays, order, limits)");
    }
    if (!ok) return rules_error("field \"" + key + "\" must be a count (a non-negative integer)");
  }
  if (Status checked = check_rules(rules); !checked.ok()) return checked.error();
  return rules;
}

Status check_rules(const Rules& rules) {
  if (rules.max_depth < 0 || rules.max_depth > 1024) return rules_error("max_depth must be 0..1024");
  if (rules.max_block_bytes < 16) return rules_error("max_block_bytes must be at least 16");
  if (rules.scalar_array_chunk == 0) return rules_error("scalar_array_chunk must be at least 1");
  if (rules.limits.max_nesting < 1 || rules.limits.max_nesting > 1024) {
    return rules_error("limits.max_nesting must be 1..1024 (deeper input could exhaust the stack)");
  }
  if (rules.limits.max_document_bytes == 0 ||
      rules.limits.max_document_bytes > (std::uint64_t{1} << 32) - 64) {
    return rules_error("limits.max_document_bytes must be 1..4 GiB");
  }
  for (const auto* list : {&rules.pin, &rules.drop}) {
    for (const auto& text : *list) {
      auto pattern = detail::Pattern::parse(text);
      if (!pattern) return pattern.error();
    }
  }
  if (Status checked = detail::check_quantize(rules.quantize); !checked.ok()) return checked;
  return detail::check_array_rules(rules.arrays);
}

Result<Rules> load_rules(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::kIo, 0, "cannot open rules file " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_rules(text.str());
}

}  // namespace kvframe::json_blocker
