// frame_delta(): what changed between two frames, as the generator's ground
// truth (a list of changed pointers) and as the two standard patch formats
// (internal to kvframe_moba).
//
// Arrays whose elements all carry a unique "id" are matched by id, so a unit
// dying in the middle of "units" is one removed element, not every later
// element shifted by one. Other arrays are compared index by index when their
// length is unchanged and replaced whole otherwise; objects are compared
// member by member when their keys are unchanged and replaced whole otherwise
// (the generator never adds or removes object members).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "moba/moba_stream.h"

namespace kvframe::examples::moba {

struct FrameDelta {
  std::vector<PathChange> changes;                         // document order
  nlohmann::ordered_json json_patch = nlohmann::ordered_json::array();   // RFC 6902
  nlohmann::ordered_json merge_patch = nlohmann::ordered_json::object(); // RFC 7386
};

FrameDelta frame_delta(const nlohmann::ordered_json& previous,
                       const nlohmann::ordered_json& current);

}  // namespace kvframe::examples::moba
