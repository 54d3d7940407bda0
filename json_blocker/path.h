// Block-id syntax and path patterns (internal to json_blocker).
//
// Ids and patterns share one syntax (see rules.h): keys joined by '.', array
// elements in brackets. A key that is not a plain identifier is written
// JSON-quoted in brackets (["odd key"]), so no two distinct paths print alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/json_blocker/error.h"

namespace kvframe::json_blocker::detail {

// One step of a concrete path, as the partitioner walks the document.
struct Segment {
  bool is_element = false;
  std::string_view key;        // member key (unescaped) when !is_element
  std::size_t index = 0;       // element index when is_element
  std::string_view key_field;  // e.g. "id" when the element is keyed, else empty
  std::string_view key_value;  // e.g. "hero_7"
};

// True when `key` can be written bare after a '.' (letters, digits, '_', '-',
// and any non-ASCII byte, so non-English keys read naturally).
bool is_plain_key(std::string_view key);

// Appends a JSON string literal for `s` (quotes and escapes), as an id needs it.
void append_quoted(std::string& out, std::string_view s);

// Id syntax. `at_root` is true for the first segment (no leading '.').
void append_id_key(std::string& out, std::string_view key, bool at_root);
void append_id_element(std::string& out, const Segment& element);
// RFC 6901 pointer syntax ("/units/7", '~' -> "~0", '/' -> "~1").
void append_pointer_key(std::string& out, std::string_view key);
void append_pointer_index(std::string& out, std::size_t index);

// A compiled path pattern, matched as a small NFA over segments: the state is a
// bit set of "pattern positions reached", so '**' costs nothing special.
class Pattern {
 public:
  static constexpr std::size_t kMaxSegments = 63;
  static Result<Pattern> parse(std::string_view text);

  std::uint64_t start() const;  // state before the first segment
  std::uint64_t step(std::uint64_t state, const Segment& segment) const;
  bool accepts(std::uint64_t state) const { return (state >> parts_.size()) & 1u; }
  // Whether some path below the current one could still match.
  bool alive(std::uint64_t state) const { return (state & ((std::uint64_t{1} << parts_.size()) - 1)) != 0; }

 private:
  enum class Kind : std::uint8_t { kKeyGlob, kAnyOne, kAnyMany, kAnyElement, kIndex, kKeyed };
  struct Part {
    Kind kind;
    std::string a;      // key glob, or key field for kKeyed
    std::string b;      // key value for kKeyed
    std::size_t index = 0;
  };
  bool matches(const Part& part, const Segment& segment) const;
  std::uint64_t closure(std::uint64_t state) const;  // adds positions past '**'

  std::vector<Part> parts_;
  std::uint64_t any_many_ = 0;  // bit i set: parts_[i] is '**'
};

}  // namespace kvframe::json_blocker::detail
