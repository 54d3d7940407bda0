#include "dom_check.h"

#include "duplicate_keys.h"

namespace kvframe::json_blocker::detail {

simdjson::error_code DomCheck::parse(const char* data, std::size_t size, int max_nesting) {
  const auto depth = static_cast<std::size_t>(max_nesting);
  if (parser_.capacity() < size || parser_.max_depth() != depth) {
    if (auto e = parser_.allocate(std::max(size, parser_.capacity()), depth)) return e;
    keys_.resize(depth + 2);
  }
  if (auto e = parser_.parse(data, size, false).get(root_)) return e;
  if (!root_.is_object() && !root_.is_array()) return simdjson::INCORRECT_TYPE;
  return simdjson::SUCCESS;
}

bool DomCheck::has_duplicate_keys() {
  depth_ = 0;
  return !unique_keys(root_);
}

bool DomCheck::unique_keys(simdjson::dom::element element) {
  if (element.is_array()) {
    const simdjson::dom::array array = element.get_array().value_unsafe();
    for (simdjson::dom::element child : array) {
      if ((child.is_object() || child.is_array()) && !unique_keys(child)) return false;
    }
    return true;
  }
  if (!element.is_object()) return true;
  auto& keys = keys_[depth_++];
  keys.clear();
  bool ok = true;
  const simdjson::dom::object object = element.get_object().value_unsafe();
  for (auto field : object) {
    keys.push_back(field.key);
    if ((field.value.is_object() || field.value.is_array()) && !unique_keys(field.value)) {
      ok = false;
      break;
    }
  }
  --depth_;
  return ok && !find_duplicate_key(keys.size(), [&](std::size_t i) { return keys[i]; });
}

}  // namespace kvframe::json_blocker::detail
