#include "action.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include <flatbuffers/flexbuffers.h>

namespace kvframe::client {

namespace {

using flexbuffers::Reference;

static_assert(std::is_trivially_copyable_v<Reference> && sizeof(Reference) <= sizeof(kvf_value::priv_ref),
              "kvf_value carries a flexbuffers::Reference");

Reference reference_of(const kvf_value& value) {
  Reference r;
  std::memcpy(static_cast<void*>(&r), value.priv_ref, sizeof r);
  return r;
}

kvf_value value_of(const void* owner, const Reference& r) {
  kvf_value v{};
  v.priv_owner = owner;
  std::memcpy(v.priv_ref, static_cast<const void*>(&r), sizeof r);
  return v;
}

constexpr double kTwoTo63 = 9223372036854775808.0;

bool uint_fits_int64(const Reference& r) {
  return r.AsUInt64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

kvf_value_type type_of(const Reference& r) {
  switch (r.GetType()) {
    case flexbuffers::FBT_NULL:
      return KVF_VALUE_NULL;
    case flexbuffers::FBT_BOOL:
      return KVF_VALUE_BOOL;
    case flexbuffers::FBT_INT:
    case flexbuffers::FBT_INDIRECT_INT:
      return KVF_VALUE_INT;
    case flexbuffers::FBT_UINT:
    case flexbuffers::FBT_INDIRECT_UINT:
      return uint_fits_int64(r) ? KVF_VALUE_INT : KVF_VALUE_DOUBLE;
    case flexbuffers::FBT_FLOAT:
    case flexbuffers::FBT_INDIRECT_FLOAT:
      return KVF_VALUE_DOUBLE;
    case flexbuffers::FBT_KEY:
    case flexbuffers::FBT_STRING:
      return KVF_VALUE_STRING;
    case flexbuffers::FBT_MAP:
      return KVF_VALUE_OBJECT;
    default:  // any vector, typed ones included (our server writes untyped ones)
      return r.IsUntypedVector() || r.IsTypedVector() || r.IsFixedTypedVector() ? KVF_VALUE_ARRAY : KVF_VALUE_NONE;
  }
}

const char* type_name(kvf_value_type type) {
  switch (type) {
    case KVF_VALUE_NULL: return "null";
    case KVF_VALUE_BOOL: return "a bool";
    case KVF_VALUE_INT: return "an integer";
    case KVF_VALUE_DOUBLE: return "a double";
    case KVF_VALUE_STRING: return "a string";
    case KVF_VALUE_ARRAY: return "an array";
    case KVF_VALUE_OBJECT: return "an object";
    case KVF_VALUE_NONE: break;
  }
  return "no value";
}

Status mismatch(const Reference& r, const char* wanted, std::string_view where = {}) {
  std::string at = where.empty() ? "the value" : "\"" + std::string(where) + "\"";
  return {KVF_ERR_TYPE_MISMATCH, at + " is " + type_name(type_of(r)) + ", not " + wanted};
}

// Members of a map. Its keys and its values are two vectors, each with its
// own length, which the verifier does not compare: read only what both hold.
std::size_t map_size(const flexbuffers::Map& map) { return std::min(map.size(), map.Keys().size()); }

// Elements of an array or members of an object; 0 for anything else.
std::size_t length(const Reference& r) {
  if (r.IsMap()) return map_size(r.AsMap());
  if (r.IsTypedVector()) return r.AsTypedVector().size();
  if (r.IsFixedTypedVector()) return r.AsFixedTypedVector().size();
  return r.AsVector().size();  // untyped vector; empty for anything else
}

Reference element(const Reference& r, std::size_t i) {
  if (r.IsTypedVector()) return r.AsTypedVector()[i];
  if (r.IsFixedTypedVector()) return r.AsFixedTypedVector()[i];
  return r.AsVector()[i];
}

// The position of `key` in the map's sorted keys (the order its builder
// sorted them in: strcmp), or npos.
std::size_t find_key(const flexbuffers::Map& map, const std::string& key) {
  const flexbuffers::TypedVector keys = map.Keys();
  std::size_t lo = 0, hi = map_size(map);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const int c = std::strcmp(keys[mid].AsKey(), key.c_str());
    if (c == 0) return mid;
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return std::string::npos;
}

Status none() { return {KVF_ERR_INVALID_ARGUMENT, "the kvf_value holds no value"}; }

// One step of a path: a key (path[start, end)) or an index ("[index]" spans
// path[start, end)).
struct Step {
  bool is_index = false;
  std::size_t index = 0;
  std::size_t start = 0, end = 0;
};

// Splits a whole path into steps before any is taken, so a malformed path is
// refused whatever the value holds; nullptr, or what is wrong with it.
const char* parse_path(std::string_view path, std::vector<Step>& steps) {
  std::size_t pos = 0;
  while (pos < path.size()) {
    Step step;
    if (path[pos] == '[') {
      const std::size_t close = path.find(']', pos);
      if (close == std::string_view::npos) return "a '[' without its ']'";
      const char* first = path.data() + pos + 1;
      const char* last = path.data() + close;
      if (first == last || std::from_chars(first, last, step.index).ptr != last) return "an index that is not a number";
      step.is_index = true;
      step.start = pos;
      step.end = close + 1;
    } else {
      if (pos > 0 && path[pos++] != '.') return "a key must follow a '.'";
      step.start = pos;
      step.end = std::min(path.find_first_of(".[", pos), path.size());
      if (step.end == step.start) return "an empty key";
    }
    pos = step.end;
    steps.push_back(step);
  }
  return nullptr;
}

}  // namespace

std::vector<uint8_t> stored_action(const flatbuffers::Vector<uint8_t>* action) {
  std::vector<uint8_t> stored;
  if (!action || action->size() == 0) return stored;
  stored.reserve(action->size() + 1);
  stored.assign(action->begin(), action->end());
  stored.push_back(0);
  return stored;
}

Status action_root(const std::vector<uint8_t>& stored, kvf_value* out) {
  if (stored.empty()) {
    return {KVF_ERR_NOT_FOUND, "the event carries no action (only the Result of an npc_action query does)"};
  }
  *out = value_of(stored.data(), flexbuffers::GetRoot(stored.data(), stored.size() - 1));
  return {};
}

kvf_value_type value_type(const kvf_value& value) {
  return value.priv_owner ? type_of(reference_of(value)) : KVF_VALUE_NONE;
}

Status value_get(const kvf_value& value, std::string_view path, kvf_value* out) {
  if (!value.priv_owner) return none();
  std::vector<Step> steps;
  if (const char* why = parse_path(path, steps)) {
    return {KVF_ERR_INVALID_ARGUMENT, "bad path \"" + std::string(path) + "\": " + why};
  }
  Reference r = reference_of(value);
  std::string_view walked;  // the path to `r`, for messages
  for (const Step& step : steps) {
    const std::string_view through = path.substr(0, step.end);
    if (step.is_index) {
      if (type_of(r) != KVF_VALUE_ARRAY) return mismatch(r, "an array", walked);
      if (step.index >= length(r)) {
        return {KVF_ERR_NOT_FOUND,
                "no \"" + std::string(through) + "\": the array has " + std::to_string(length(r)) + " elements"};
      }
      r = element(r, step.index);
    } else {
      if (!r.IsMap()) return mismatch(r, "an object", walked);
      const flexbuffers::Map map = r.AsMap();
      const std::size_t found = find_key(map, std::string(path.substr(step.start, step.end - step.start)));
      if (found == std::string::npos) return {KVF_ERR_NOT_FOUND, "no \"" + std::string(through) + "\""};
      r = map.Values()[found];
    }
    walked = through;
  }
  *out = value_of(value.priv_owner, r);
  return {};
}

Status value_as_bool(const kvf_value& value, bool* out) {
  if (!value.priv_owner) return none();
  const Reference r = reference_of(value);
  if (!r.IsBool()) return mismatch(r, "a bool");
  *out = r.AsBool();
  return {};
}

Status value_as_int(const kvf_value& value, int64_t* out) {
  if (!value.priv_owner) return none();
  const Reference r = reference_of(value);
  switch (type_of(r)) {
    case KVF_VALUE_INT:
      *out = r.AsInt64();
      return {};
    case KVF_VALUE_DOUBLE: {  // 3.0 is an integer too (JSON Schema's "integer" says so)
      const double d = r.AsDouble();
      if (std::trunc(d) == d && d >= -kTwoTo63 && d < kTwoTo63) {
        *out = static_cast<int64_t>(d);
        return {};
      }
      return {KVF_ERR_TYPE_MISMATCH, "the value " + std::to_string(d) + " is not an integer within int64"};
    }
    default:
      return mismatch(r, "an integer");
  }
}

Status value_as_double(const kvf_value& value, double* out) {
  if (!value.priv_owner) return none();
  const Reference r = reference_of(value);
  switch (type_of(r)) {
    case KVF_VALUE_INT:
    case KVF_VALUE_DOUBLE:
      *out = r.AsDouble();  // converts integers of every width and sign
      return {};
    default:
      return mismatch(r, "a number");
  }
}

Status value_as_string(const kvf_value& value, std::string_view* out) {
  if (!value.priv_owner) return none();
  const Reference r = reference_of(value);
  if (type_of(r) != KVF_VALUE_STRING) return mismatch(r, "a string");
  const flexbuffers::String s = r.AsString();
  // The verifier checks that a string's terminator lies within the buffer,
  // not that it is a NUL; the C API promises NUL-terminated strings.
  if (s.c_str()[s.length()] != '\0') return {KVF_ERR_MALFORMED, "a string of the action is not terminated"};
  *out = std::string_view(s.c_str(), s.length());
  return {};
}

std::size_t value_size(const kvf_value& value) {
  if (!value.priv_owner) return 0;
  const Reference r = reference_of(value);
  const kvf_value_type type = type_of(r);
  return type == KVF_VALUE_ARRAY || type == KVF_VALUE_OBJECT ? length(r) : 0;
}

Status value_at(const kvf_value& value, std::size_t index, kvf_value* out) {
  if (!value.priv_owner) return none();
  const Reference r = reference_of(value);
  const kvf_value_type type = type_of(r);
  if (type != KVF_VALUE_ARRAY && type != KVF_VALUE_OBJECT) return mismatch(r, "an array or an object");
  if (index >= length(r)) {
    return {KVF_ERR_NOT_FOUND, "index " + std::to_string(index) + " of " + std::to_string(length(r)) + " elements"};
  }
  *out = value_of(value.priv_owner, element(r, index));
  return {};
}

Status value_key_at(const kvf_value& value, std::size_t index, std::string_view* out) {
  if (!value.priv_owner) return none();
  const Reference r = reference_of(value);
  if (!r.IsMap()) return mismatch(r, "an object");
  const flexbuffers::Map map = r.AsMap();
  if (index >= map_size(map)) {
    return {KVF_ERR_NOT_FOUND, "index " + std::to_string(index) + " of " + std::to_string(map_size(map)) + " members"};
  }
  *out = map.Keys()[index].AsKey();
  return {};
}

}  // namespace kvframe::client
