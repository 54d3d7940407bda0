#include "moba/frame_delta.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kvframe::examples::moba {
namespace {

using Json = nlohmann::ordered_json;

// RFC 6901 escaping of one reference token, done by nlohmann's json_pointer.
std::string escape(const std::string& key) { return (Json::json_pointer() / key).to_string().substr(1); }

bool same_keys(const Json& a, const Json& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i.key() != j.key()) return false;
  }
  return true;
}

// The "id" of each element (as JSON text, so 7 and "7" differ), when every
// element is an object with a unique string or integer "id".
std::optional<std::vector<std::string>> element_ids(const Json& array) {
  std::vector<std::string> ids;
  std::unordered_set<std::string> seen;
  for (const Json& element : array) {
    if (!element.is_object()) return std::nullopt;
    auto id = element.find("id");
    if (id == element.end() || !(id->is_string() || id->is_number_integer())) return std::nullopt;
    ids.push_back(id->dump());
    if (!seen.insert(ids.back()).second) return std::nullopt;
  }
  return ids;
}

// A pointer that grows and shrinks with the recursion.
class Pointer {
 public:
  const std::string& str() const { return text_; }
  void push(const std::string& token) {
    sizes_.push_back(text_.size());
    text_ += '/';
    text_ += token;
  }
  void push(std::size_t index) { push(std::to_string(index)); }
  void pop() {
    text_.resize(sizes_.back());
    sizes_.pop_back();
  }

 private:
  std::string text_;
  std::vector<std::size_t> sizes_;
};

class JsonPatchDiff {
 public:
  void compare(const Json& before, const Json& after) {
    if (before == after) return;
    if (before.is_object() && after.is_object() && same_keys(before, after)) {
      for (auto i = before.begin(), j = after.begin(); i != before.end(); ++i, ++j) {
        const std::string token = escape(i.key());
        compare_child(i.value(), token, j.value(), token);
      }
      return;
    }
    const bool arrays = before.is_array() && after.is_array();
    if (arrays && (compare_by_id(before, after) || compare_by_index(before, after))) return;
    changes_.push_back({PathChange::Kind::kModified, after_.str()});
    replaces_.push_back({{"op", "replace"}, {"path", after_.str()}, {"value", after}});
  }

  FrameDelta finish() && {
    FrameDelta delta;
    delta.changes = std::move(changes_);
    // Removes use previous-frame indices: applied last element first, each
    // leaves the ones before it in place. Then the array holds exactly the
    // kept elements, so adds at current indices, in order, land right, and
    // after them every current pointer is valid for the replaces.
    for (auto op = removes_.rbegin(); op != removes_.rend(); ++op) delta.json_patch.push_back(*op);
    for (Json& op : adds_) delta.json_patch.push_back(std::move(op));
    for (Json& op : replaces_) delta.json_patch.push_back(std::move(op));
    return delta;
  }

 private:
  template <class Token>
  void compare_child(const Json& before, Token before_token, const Json& after, Token after_token) {
    before_.push(before_token);
    after_.push(after_token);
    compare(before, after);
    before_.pop();
    after_.pop();
  }

  bool compare_by_index(const Json& before, const Json& after) {
    if (before.size() != after.size()) return false;
    for (std::size_t i = 0; i < before.size(); ++i) compare_child(before[i], i, after[i], i);
    return true;
  }

  // Matches elements by id; false (and nothing recorded) when the arrays are
  // not both id-keyed or the kept elements changed their relative order.
  bool compare_by_id(const Json& before, const Json& after) {
    const auto before_ids = element_ids(before), after_ids = element_ids(after);
    if (!before_ids || !after_ids) return false;
    std::unordered_map<std::string, std::size_t> before_index;
    for (std::size_t i = 0; i < before_ids->size(); ++i) before_index.emplace((*before_ids)[i], i);
    std::vector<long> match(after_ids->size(), -1);  // previous index per current element
    long last = -1;
    for (std::size_t j = 0; j < after_ids->size(); ++j) {
      auto it = before_index.find((*after_ids)[j]);
      if (it == before_index.end()) continue;
      match[j] = static_cast<long>(it->second);
      if (match[j] < last) return false;
      last = match[j];
    }
    std::size_t next_before = 0;  // previous elements before it are handled
    for (std::size_t j = 0; j < after.size(); ++j) {
      if (match[j] < 0) {
        after_.push(j);
        changes_.push_back({PathChange::Kind::kAdded, after_.str()});
        adds_.push_back({{"op", "add"}, {"path", after_.str()}, {"value", after[j]}});
        after_.pop();
        continue;
      }
      const auto kept = static_cast<std::size_t>(match[j]);
      remove_until(kept, next_before);
      compare_child(before[kept], kept, after[j], j);
      next_before = kept + 1;
    }
    remove_until(before.size(), next_before);
    return true;
  }

  // Records previous elements [next_before, end) as removed.
  void remove_until(std::size_t end, std::size_t next_before) {
    for (std::size_t i = next_before; i < end; ++i) {
      before_.push(i);
      changes_.push_back({PathChange::Kind::kRemoved, before_.str()});
      removes_.push_back({{"op", "remove"}, {"path", before_.str()}});
      before_.pop();
    }
  }

  Pointer before_, after_;
  std::vector<PathChange> changes_;
  std::vector<Json> removes_, adds_, replaces_;
};

// RFC 7386 has no array operations: a changed array is sent whole.
Json merge_diff(const Json& before, const Json& after) {
  if (!before.is_object() || !after.is_object()) return after;
  Json patch = Json::object();
  for (auto j = after.begin(); j != after.end(); ++j) {
    auto i = before.find(j.key());
    if (i == before.end()) {
      patch[j.key()] = j.value();
    } else if (*i != j.value()) {
      patch[j.key()] = merge_diff(*i, j.value());
    }
  }
  for (auto i = before.begin(); i != before.end(); ++i) {
    if (!after.contains(i.key())) patch[i.key()] = nullptr;
  }
  return patch;
}

}  // namespace

FrameDelta frame_delta(const Json& previous, const Json& current) {
  JsonPatchDiff diff;
  diff.compare(previous, current);
  FrameDelta delta = std::move(diff).finish();
  delta.merge_patch = merge_diff(previous, current);
  return delta;
}

}  // namespace kvframe::examples::moba
