// ValueLocator: where the value at an RFC 6901 pointer starts in a frame's
// text. Links the generator's changed pointers to json_blocker's blocks, whose
// source ranges are byte offsets into the same text.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace kvframe::examples::moba {

class ValueLocator {
 public:
  // Keeps its own padded copy of `json`; the parse is shared by all lookups.
  explicit ValueLocator(std::string_view json);
  ~ValueLocator();
  ValueLocator(const ValueLocator&) = delete;
  ValueLocator& operator=(const ValueLocator&) = delete;

  // Offset of the first byte of the value at `pointer`, or nullopt when the
  // text has no such value (or is not JSON).
  std::optional<std::size_t> offset_of(std::string_view pointer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::examples::moba
