// JSON Schema -> node tree. The schema is read with simdjson's DOM (schemas
// are small; the DOM lets us look keywords up in any order). Every keyword is
// either supported, an annotation (ignored) or refused: a constraint we would
// not enforce could let an invalid action through.
#include "schema_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "kvframe/common/json_pointer.h"
#include "pattern_dfa.h"

namespace kvframe::runtime::schema {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

constexpr const char* kSupportedKeywords =
    "type, properties, required, additionalProperties, enum, const, minimum, maximum, "
    "exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, items, minItems, maxItems, anyOf";

// Keywords that describe without constraining, and containers of schemas
// that only $ref (unsupported) could reach.
constexpr std::array<std::string_view, 11> kIgnoredKeywords = {
    "title", "description", "default", "examples", "$schema", "$id", "$comment",
    "readOnly", "writeOnly", "definitions", "$defs"};

struct Keywords {
  std::optional<element> type, properties, required, additional_properties, enum_values, const_value, minimum,
      maximum, exclusive_minimum, exclusive_maximum, min_length, max_length, pattern, items, min_items, max_items,
      any_of;
};

struct KeywordSlot {
  std::string_view name;
  std::optional<element> Keywords::*slot;
};
constexpr std::array<KeywordSlot, 17> kKeywordSlots = {{
    {"type", &Keywords::type},
    {"properties", &Keywords::properties},
    {"required", &Keywords::required},
    {"additionalProperties", &Keywords::additional_properties},
    {"enum", &Keywords::enum_values},
    {"const", &Keywords::const_value},
    {"minimum", &Keywords::minimum},
    {"maximum", &Keywords::maximum},
    {"exclusiveMinimum", &Keywords::exclusive_minimum},
    {"exclusiveMaximum", &Keywords::exclusive_maximum},
    {"minLength", &Keywords::min_length},
    {"maxLength", &Keywords::max_length},
    {"pattern", &Keywords::pattern},
    {"items", &Keywords::items},
    {"minItems", &Keywords::min_items},
    {"maxItems", &Keywords::max_items},
    {"anyOf", &Keywords::any_of},
}};

std::string child_path(const std::string& path, std::string_view keyword) {
  return path + "/" + common::json_pointer_token(keyword);
}

SchemaError invalid(std::string message, std::string path) {
  return schema_error(ErrorCode::kSchemaInvalid, std::move(message), std::move(path));
}

SchemaError unsupported(std::string message, std::string path) {
  return schema_error(ErrorCode::kSchemaUnsupported, std::move(message), std::move(path));
}

// The array / object an element is (the caller checked its type). By value:
// a range-for over get_array().value() would bind to a dying temporary.
simdjson::dom::array array_of(const element& e) {
  simdjson::dom::array a;
  if (e.get_array().get(a) != simdjson::SUCCESS) return {};
  return a;
}

simdjson::dom::object object_of(const element& e) {
  simdjson::dom::object o;
  if (e.get_object().get(o) != simdjson::SUCCESS) return {};
  return o;
}

bool is_number(const element& e) {
  const element_type t = e.type();
  return t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
}

// minLength & co: a non-negative integer (2.0 counts, as in JSON Schema).
SchemaResult<int64_t> non_negative_integer(const element& e, const std::string& path) {
  constexpr int64_t kLimit = int64_t{1} << 40;  // far beyond anything a program could hold
  switch (e.type()) {
    case element_type::INT64:
      if (int64_t v = e.get_int64().value(); v >= 0) return std::min(v, kLimit);
      break;
    case element_type::UINT64:
      return kLimit;
    case element_type::DOUBLE:
      if (double v = e.get_double().value(); v >= 0 && v == std::floor(v)) {
        return v >= static_cast<double>(kLimit) ? kLimit : static_cast<int64_t>(v);
      }
      break;
    default:
      break;
  }
  return invalid("must be a non-negative integer", path);
}

Int128 floor_div(Int128 a, Int128 b) {  // b > 0
  Int128 q = a / b;
  if (a % b != 0 && a < 0) --q;
  return q;
}

// floor(x * 10^6) of a schema number, exactly for the decimal the number is
// written as (a double's shortest representation), and whether that floor is
// exact. Magnitudes past 1e24 are clamped: nothing that large is generated.
struct Scaled {
  Int128 floor = 0;
  bool exact = true;
};
constexpr int kBoundFractionDigits = 6;

Scaled scaled_bound(const element& e) {
  const Int128 scale = pow10(kBoundFractionDigits);
  const Int128 clamp = pow10(24 + kBoundFractionDigits);
  switch (e.type()) {
    case element_type::INT64:
      return {Int128{e.get_int64().value()} * scale, true};
    case element_type::UINT64:
      return {Int128{e.get_uint64().value()} * scale, true};
    default:
      break;
  }
  const double x = e.get_double().value();
  if (!(std::fabs(x) < 1e24)) return {x < 0 ? -clamp : clamp, true};
  std::array<char, 64> buf{};
  // The shortest text that reads back as x: the decimal the schema author wrote.
  const auto written = std::to_chars(buf.data(), buf.data() + buf.size(), std::fabs(x), std::chars_format::fixed);
  const std::string_view text(buf.data(), static_cast<size_t>(written.ptr - buf.data()));
  Int128 magnitude = 0;
  bool exact = true;
  int fraction = -1;  // digits after '.' so far; -1 before the point
  for (char c : text) {
    if (c == '.') {
      fraction = 0;
      continue;
    }
    if (fraction >= kBoundFractionDigits) {
      exact = exact && c == '0';
      continue;
    }
    magnitude = magnitude * 10 + (c - '0');
    if (fraction >= 0) ++fraction;
  }
  for (int i = std::max(fraction, 0); i < kBoundFractionDigits; ++i) magnitude *= 10;
  if (x >= 0) return {magnitude, exact};
  return {exact ? -magnitude : -magnitude - 1, exact};
}

size_t code_points(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// The `pattern` keyword as a DFA (null when absent); errors point at it.
SchemaResult<std::shared_ptr<const PatternDfa>> pattern_of(const Keywords& k, const std::string& path) {
  if (!k.pattern) return std::shared_ptr<const PatternDfa>();
  const std::string here = child_path(path, "pattern");
  if (k.pattern->type() != element_type::STRING) {
    return invalid("pattern must be a string (a regular expression)", here);
  }
  auto dfa = compile_pattern(k.pattern->get_string().value());
  if (!dfa) {
    SchemaError error = dfa.error();
    error.path = here;
    return error;
  }
  return dfa;
}

class Parser {
 public:
  SchemaResult<Node> schema(const element& e, const std::string& path, int depth);

 private:
  SchemaResult<Keywords> keywords(const simdjson::dom::object& object, const std::string& path);
  SchemaResult<Node> any_of(const Keywords& k, const std::string& path, int depth);
  SchemaResult<Node> literals(const Keywords& k, const std::string& path);
  SchemaResult<Node> typed(std::string_view type, const Keywords& k, const std::string& path, int depth);
  SchemaResult<Node> object(const Keywords& k, const std::string& path, int depth);
  SchemaResult<Node> array(const Keywords& k, const std::string& path, int depth);
  SchemaResult<Node> string(const Keywords& k, const std::string& path);
  SchemaResult<Node> number(bool integer, const Keywords& k, const std::string& path);
  SchemaResult<void> literal_fits(const element& value, const Keywords& k, const PatternDfa* pattern,
                                  const std::string& path, bool& fits);
};

SchemaResult<Keywords> Parser::keywords(const simdjson::dom::object& object, const std::string& path) {
  Keywords k;
  for (const auto field : object) {
    const auto slot = std::find_if(kKeywordSlots.begin(), kKeywordSlots.end(),
                                   [&](const KeywordSlot& s) { return s.name == field.key; });
    if (slot != kKeywordSlots.end()) {
      if ((k.*(slot->slot)).has_value()) {
        return invalid("keyword '" + std::string(field.key) + "' appears twice", child_path(path, field.key));
      }
      k.*(slot->slot) = field.value;
      continue;
    }
    if (std::find(kIgnoredKeywords.begin(), kIgnoredKeywords.end(), field.key) != kIgnoredKeywords.end()) continue;
    return unsupported("keyword '" + std::string(field.key) + "' is not supported (supported: " +
                           kSupportedKeywords + "; annotations such as title and description are ignored)",
                       child_path(path, field.key));
  }
  return k;
}

SchemaResult<Node> Parser::schema(const element& e, const std::string& path, int depth) {
  if (depth > kMaxSchemaDepth) {
    return schema_error(ErrorCode::kSchemaTooComplex,
                        "schemas nested deeper than " + std::to_string(kMaxSchemaDepth) + " levels", path);
  }
  if (e.type() == element_type::BOOL) {
    if (e.get_bool().value()) return unsupported("a `true` schema allows any value: give it a type", path);
    return invalid("a `false` schema allows no value", path);
  }
  if (e.type() != element_type::OBJECT) return invalid("a schema must be an object", path);
  auto k = keywords(object_of(e), path);
  if (!k) return k.error();
  if (k->any_of) return any_of(*k, path, depth);
  if (k->enum_values || k->const_value) return literals(*k, path);
  if (!k->type) return unsupported("give the schema a type (or enum / const)", path);

  if (k->type->type() == element_type::STRING) return typed(k->type->get_string().value(), *k, path, depth);
  if (k->type->type() != element_type::ARRAY) {
    return invalid("type must be a type name or an array of them", child_path(path, "type"));
  }
  Node node;
  node.kind = Node::Kind::kAnyOf;
  node.path = path;
  std::vector<std::string_view> seen;
  for (const element name : array_of(*k->type)) {
    if (name.type() != element_type::STRING) {
      return invalid("type must be a type name or an array of them", child_path(path, "type"));
    }
    const std::string_view type = name.get_string().value();
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) {
      return invalid("type '" + std::string(type) + "' listed twice", child_path(path, "type"));
    }
    seen.push_back(type);
    auto alternative = typed(type, *k, path, depth);
    if (!alternative) return alternative.error();
    node.children.push_back(std::move(*alternative));
  }
  if (node.children.empty()) return invalid("type lists no type", child_path(path, "type"));
  if (node.children.size() == 1) return std::move(node.children.front());
  return node;
}

SchemaResult<Node> Parser::any_of(const Keywords& k, const std::string& path, int depth) {
  // Beside anyOf, other keywords would intersect with every branch: we
  // compile alternatives only, so they must go into the branches.
  if (k.type || k.properties || k.required || k.enum_values || k.const_value || k.minimum || k.maximum ||
      k.exclusive_minimum || k.exclusive_maximum || k.min_length || k.max_length || k.pattern || k.items ||
      k.min_items || k.max_items) {
    return unsupported("keywords beside anyOf: move them into each branch", path);
  }
  const std::string here = child_path(path, "anyOf");
  if (k.any_of->type() != element_type::ARRAY) return invalid("anyOf must be an array of schemas", here);
  Node node;
  node.kind = Node::Kind::kAnyOf;
  node.path = path;
  size_t index = 0;
  for (const element branch : array_of(*k.any_of)) {
    auto alternative = schema(branch, here + "/" + std::to_string(index++), depth + 1);
    if (!alternative) return alternative.error();
    node.children.push_back(std::move(*alternative));
  }
  if (node.children.empty()) return invalid("anyOf must not be empty", here);
  if (node.children.size() == 1) return std::move(node.children.front());
  return node;
}

// Whether an enum / const value also satisfies the schema's other keywords
// (type, lengths, pattern, bounds, item counts, required names), so that
// only values valid against the whole schema are generated.
SchemaResult<void> Parser::literal_fits(const element& value, const Keywords& k, const PatternDfa* pattern,
                                        const std::string& path, bool& fits) {
  fits = false;
  std::vector<std::string_view> types;
  switch (value.type()) {
    case element_type::OBJECT: types = {"object"}; break;
    case element_type::ARRAY: types = {"array"}; break;
    case element_type::STRING: types = {"string"}; break;
    case element_type::BOOL: types = {"boolean"}; break;
    case element_type::NULL_VALUE: types = {"null"}; break;
    case element_type::DOUBLE: {
      const double v = value.get_double().value();
      types = v == std::floor(v) ? std::vector<std::string_view>{"number", "integer"}
                                 : std::vector<std::string_view>{"number"};
      break;
    }
    default: types = {"number", "integer"}; break;
  }
  if (k.type) {
    std::vector<std::string_view> allowed;
    if (k.type->type() == element_type::STRING) {
      allowed.push_back(k.type->get_string().value());
    } else if (k.type->type() == element_type::ARRAY) {
      for (const element name : array_of(*k.type)) {
        if (name.type() == element_type::STRING) allowed.push_back(name.get_string().value());
      }
    } else {
      return invalid("type must be a type name or an array of them", child_path(path, "type"));
    }
    const bool typed_ok = std::any_of(types.begin(), types.end(), [&](std::string_view t) {
      return std::find(allowed.begin(), allowed.end(), t) != allowed.end();
    });
    if (!typed_ok) return {};
  }
  if (value.type() == element_type::STRING) {
    if (pattern != nullptr && !pattern->matches(value.get_string().value())) return {};
    const size_t n = code_points(value.get_string().value());
    for (const auto& [bound, name, is_min] : {std::tuple{k.min_length, "minLength", true},
                                              std::tuple{k.max_length, "maxLength", false}}) {
      if (!bound) continue;
      auto limit = non_negative_integer(*bound, child_path(path, name));
      if (!limit) return limit.error();
      if (is_min ? static_cast<int64_t>(n) < *limit : static_cast<int64_t>(n) > *limit) return {};
    }
  } else if (is_number(value)) {
    const double v = value.get_double().value();
    for (const auto& [bound, name] : {std::pair{k.minimum, "minimum"}, std::pair{k.maximum, "maximum"},
                                      std::pair{k.exclusive_minimum, "exclusiveMinimum"},
                                      std::pair{k.exclusive_maximum, "exclusiveMaximum"}}) {
      if (!bound) continue;
      if (!is_number(*bound)) return invalid(std::string(name) + " must be a number", child_path(path, name));
      const double b = bound->get_double().value();
      const std::string_view n(name);
      if ((n == "minimum" && v < b) || (n == "maximum" && v > b) || (n == "exclusiveMinimum" && v <= b) ||
          (n == "exclusiveMaximum" && v >= b)) {
        return {};
      }
    }
  } else if (value.type() == element_type::ARRAY) {
    const auto n = static_cast<int64_t>(array_of(value).size());
    for (const auto& [bound, name, is_min] : {std::tuple{k.min_items, "minItems", true},
                                              std::tuple{k.max_items, "maxItems", false}}) {
      if (!bound) continue;
      auto limit = non_negative_integer(*bound, child_path(path, name));
      if (!limit) return limit.error();
      if (is_min ? n < *limit : n > *limit) return {};
    }
  } else if (value.type() == element_type::OBJECT && k.required && k.required->type() == element_type::ARRAY) {
    const auto object = object_of(value);
    for (const element name : array_of(*k.required)) {
      if (name.type() != element_type::STRING) continue;
      if (object.at_key(name.get_string().value()).error() != simdjson::SUCCESS) return {};
    }
  }
  fits = true;
  return {};
}

SchemaResult<Node> Parser::literals(const Keywords& k, const std::string& path) {
  std::vector<element> values;
  std::string where;
  if (k.enum_values) {
    where = child_path(path, "enum");
    if (k.enum_values->type() != element_type::ARRAY) return invalid("enum must be an array", where);
    for (const element value : array_of(*k.enum_values)) values.push_back(value);
    if (values.empty()) return invalid("enum must not be empty", where);
  }
  if (k.const_value) {
    const std::string constant = simdjson::minify(*k.const_value);
    if (!k.enum_values) {
      values.push_back(*k.const_value);
    } else {  // both: the const, if the enum has it
      values.erase(std::remove_if(values.begin(), values.end(),
                                  [&](const element& v) { return simdjson::minify(v) != constant; }),
                   values.end());
    }
    where = child_path(path, "const");
  }
  auto pattern = pattern_of(k, path);
  if (!pattern) return pattern.error();
  Node node;
  node.kind = Node::Kind::kLiterals;
  node.path = path;
  for (const element& value : values) {
    bool fits = false;
    if (auto checked = literal_fits(value, k, pattern->get(), path, fits); !checked.ok()) return checked.error();
    std::string text = simdjson::minify(value);
    if (fits && std::find(node.texts.begin(), node.texts.end(), text) == node.texts.end()) {
      node.texts.push_back(std::move(text));
    }
  }
  if (node.texts.empty()) return invalid("no enum / const value satisfies the schema's other keywords", where);
  return node;
}

SchemaResult<Node> Parser::typed(std::string_view type, const Keywords& k, const std::string& path, int depth) {
  if (type == "object") return object(k, path, depth);
  if (type == "array") return array(k, path, depth);
  if (type == "string") return string(k, path);
  if (type == "integer" || type == "number") return number(type == "integer", k, path);
  Node node;
  node.path = path;
  if (type == "boolean") {
    node.kind = Node::Kind::kBoolean;
    return node;
  }
  if (type == "null") {
    node.kind = Node::Kind::kNull;
    return node;
  }
  return invalid("unknown type '" + std::string(type) +
                     "' (types: object, array, string, integer, number, boolean, null)",
                 child_path(path, "type"));
}

SchemaResult<Node> Parser::object(const Keywords& k, const std::string& path, int depth) {
  Node node;
  node.kind = Node::Kind::kObject;
  node.path = path;
  std::vector<std::string_view> names;
  if (k.properties) {
    const std::string here = child_path(path, "properties");
    if (k.properties->type() != element_type::OBJECT) return invalid("properties must be an object", here);
    for (const auto field : object_of(*k.properties)) {
      if (std::find(names.begin(), names.end(), field.key) != names.end()) {
        return invalid("property '" + std::string(field.key) + "' defined twice", child_path(here, field.key));
      }
      auto value = schema(field.value, child_path(here, field.key), depth + 1);
      if (!value) return value.error();
      names.push_back(field.key);
      node.texts.push_back(json_quote(field.key));
      node.children.push_back(std::move(*value));
      node.required.push_back(false);
    }
  }
  if (k.required) {
    const std::string here = child_path(path, "required");
    if (k.required->type() != element_type::ARRAY) return invalid("required must be an array of names", here);
    for (const element name : array_of(*k.required)) {
      if (name.type() != element_type::STRING) return invalid("required must be an array of names", here);
      const auto at = std::find(names.begin(), names.end(), name.get_string().value());
      if (at == names.end()) {
        return invalid("required names '" + std::string(name.get_string().value()) +
                           "', which is not in properties (other properties are never generated)",
                       here);
      }
      node.required[static_cast<size_t>(at - names.begin())] = true;
    }
  }
  // additionalProperties: whatever it allows, only the listed properties are written.
  return node;
}

SchemaResult<Node> Parser::array(const Keywords& k, const std::string& path, int depth) {
  Node node;
  node.kind = Node::Kind::kArray;
  node.path = path;
  if (k.min_items) {
    auto v = non_negative_integer(*k.min_items, child_path(path, "minItems"));
    if (!v) return v.error();
    node.min_items = *v;
  }
  if (k.max_items) {
    auto v = non_negative_integer(*k.max_items, child_path(path, "maxItems"));
    if (!v) return v.error();
    node.max_items = *v;
    if (node.max_items < node.min_items) return invalid("minItems is above maxItems", path);
  }
  if (!k.items) {
    if (node.max_items == 0) return node;
    return unsupported("give the array `items` (a schema with a type)", path);
  }
  if (k.items->type() == element_type::ARRAY) {
    return unsupported("tuple `items` (an array of schemas) is not supported: give one schema",
                       child_path(path, "items"));
  }
  auto item = schema(*k.items, child_path(path, "items"), depth + 1);
  if (!item) return item.error();
  node.children.push_back(std::move(*item));
  return node;
}

SchemaResult<Node> Parser::string(const Keywords& k, const std::string& path) {
  Node node;
  node.kind = Node::Kind::kString;
  node.path = path;
  if (k.min_length) {
    auto v = non_negative_integer(*k.min_length, child_path(path, "minLength"));
    if (!v) return v.error();
    node.string.min = *v;
  }
  if (k.max_length) {
    auto v = non_negative_integer(*k.max_length, child_path(path, "maxLength"));
    if (!v) return v.error();
    node.string.max = *v;
    if (node.string.max < node.string.min) return invalid("minLength is above maxLength", path);
  }
  auto pattern = pattern_of(k, path);
  if (!pattern) return pattern.error();
  node.pattern = std::move(*pattern);
  return node;
}

SchemaResult<Node> Parser::number(bool integer, const Keywords& k, const std::string& path) {
  // Bounds in millionths first (exact for what the schema wrote), then in
  // the leaf's own scale.
  const Int128 huge = pow10(30);
  Int128 lo = -huge, hi = huge;
  bool bounded_lo = false, bounded_hi = false;
  for (const auto& [bound, name] : {std::pair{k.minimum, "minimum"}, std::pair{k.exclusive_minimum,
                                                                                "exclusiveMinimum"},
                                    std::pair{k.maximum, "maximum"}, std::pair{k.exclusive_maximum,
                                                                               "exclusiveMaximum"}}) {
    if (!bound) continue;
    if (!is_number(*bound)) return invalid(std::string(name) + " must be a number", child_path(path, name));
    const Scaled s = scaled_bound(*bound);
    const std::string_view n(name);
    if (n == "minimum") lo = std::max(lo, s.exact ? s.floor : s.floor + 1);
    if (n == "exclusiveMinimum") lo = std::max(lo, s.floor + 1);
    if (n == "maximum") hi = std::min(hi, s.floor);
    if (n == "exclusiveMaximum") hi = std::min(hi, s.exact ? s.floor - 1 : s.floor);
    (n == "minimum" || n == "exclusiveMinimum" ? bounded_lo : bounded_hi) = true;
  }
  Node node;
  node.kind = Node::Kind::kNumber;
  node.path = path;
  NumberSpec& spec = node.number;
  if (integer) {
    spec.fraction_digits = 0;
    spec.max_int_digits = 19;
  } else {
    // At most 15 significant digits (a double reads them back in order):
    // as many integer digits as the bounds need, the rest after the point.
    int digits = 9;
    if (bounded_lo && bounded_hi) {
      const Int128 magnitude = std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi) / pow10(kBoundFractionDigits);
      digits = 1;
      while (digits < 15 && magnitude >= pow10(digits)) ++digits;
    }
    spec.max_int_digits = digits;
    spec.fraction_digits = std::min(kBoundFractionDigits, 15 - digits);
  }
  const Int128 rescale = pow10(kBoundFractionDigits - spec.fraction_digits);
  const Int128 scaled_lo = -floor_div(-lo, rescale);  // ceil
  const Int128 scaled_hi = floor_div(hi, rescale);
  if (scaled_lo > scaled_hi) {
    return invalid(std::string("no ") + (integer ? "integer" : "number") + " lies within the bounds", path);
  }
  Int128 limit = pow10(spec.max_int_digits + spec.fraction_digits) - 1;
  if (integer) limit = std::numeric_limits<int64_t>::max();
  spec.lo = std::max(scaled_lo, integer ? Int128{std::numeric_limits<int64_t>::min()} : -limit);
  spec.hi = std::min(scaled_hi, limit);
  if (spec.lo > spec.hi) {
    return unsupported(integer ? "integer bounds outside int64" : "number bounds beyond 15 significant digits", path);
  }
  return node;
}

}  // namespace

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

SchemaResult<Node> parse_schema(std::string_view schema_json) {
  // One parser per thread: its buffers are reused, so a small schema costs
  // no allocation after the first.
  thread_local simdjson::dom::parser parser;
  const simdjson::padded_string padded(schema_json);
  element root;
  if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
    return schema_error(ErrorCode::kSchemaNotJson, std::string("the schema is not JSON: ") +
                                                       simdjson::error_message(error), "");
  }
  return Parser().schema(root, "", 0);
}

}  // namespace kvframe::runtime::schema
