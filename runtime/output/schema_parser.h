// JSON Schema text -> node tree (schema_nodes.h): every keyword checked
// against the supported subset, every error with its JSON pointer.
#pragma once

#include <string_view>

#include "schema_nodes.h"

namespace kvframe::runtime::schema {

inline constexpr int kMaxSchemaDepth = 32;  // nested schemas (properties, items, anyOf)

SchemaResult<Node> parse_schema(std::string_view schema_json);

// `text` as a JSON string literal, quotes included: what a property name is
// matched as (", \ and control characters escaped, everything else raw).
std::string json_quote(std::string_view text);

}  // namespace kvframe::runtime::schema
