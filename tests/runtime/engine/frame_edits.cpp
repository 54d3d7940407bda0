#include "frame_edits.h"

#include <algorithm>
#include <vector>

namespace kvframe::test {

FrameEdits::FrameEdits(uint32_t seed, int units) : rng_(seed) {
  state_["match"] = {{"tick", 100}, {"phase", "laning"}, {"score", {3, 2}}};
  state_["units"] = nlohmann::ordered_json::array();
  for (int i = 0; i < units; ++i) state_["units"].push_back(make_unit());
  state_["rules"] = {{"text", "Destroy the enemy core. Heroes respawn after 10 s."}, {"version", 7}};
  state_["log"] = nlohmann::ordered_json::array({"match started"});
}

nlohmann::ordered_json FrameEdits::make_unit() {
  std::uniform_int_distribution<int> hp(1, 999), coord(-500, 500);
  return {{"id", "u" + std::to_string(next_id_++)},
          {"hp", hp(rng_)},
          {"pos", {coord(rng_), coord(rng_)}},
          {"state", "idle"}};
}

const char* FrameEdits::edit() {
  auto& units = state_["units"];
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); };
  state_["match"]["tick"] = state_["match"]["tick"].get<int>() + 1;
  switch (std::uniform_int_distribution<int>(0, 5)(rng_)) {
    case 0:  // a value, often changing the block's length (hp 9 -> 10)
      units[pick(units.size())]["hp"] = std::uniform_int_distribution<int>(1, 20000)(rng_);
      return "value";
    case 1:
      units.insert(units.begin() + static_cast<std::ptrdiff_t>(pick(units.size() + 1)), make_unit());
      return "add";
    case 2:
      if (units.size() > 2) {
        units.erase(units.begin() + static_cast<std::ptrdiff_t>(pick(units.size())));
        return "remove";
      }
      units.push_back(make_unit());
      return "add";
    case 3: {
      const size_t a = pick(units.size()), b = pick(units.size());
      std::swap(units[a], units[b]);
      return "reorder";
    }
    case 4: {
      std::string& s = units[pick(units.size())]["state"].get_ref<std::string&>();
      s = s.size() > 24 ? "idle" : s + " moving";
      return "grow";
    }
    default:
      state_["log"].push_back("event " + std::to_string(state_["match"]["tick"].get<int>()));
      return "log";
  }
}

}  // namespace kvframe::test
