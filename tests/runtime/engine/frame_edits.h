// Random edits of a small game state, for exactness tests: every kind of
// change a frame can bring — values changed (lengths changing with them),
// entities added, removed and reordered, the event log growing.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace kvframe::test {

class FrameEdits {
 public:
  explicit FrameEdits(uint32_t seed, int units = 12);
  // The current frame, minified.
  std::string json() const { return state_.dump(); }
  // Applies one random edit and returns its kind ("value", "add", "remove",
  // "reorder", "grow", "log").
  const char* edit();

 private:
  nlohmann::ordered_json make_unit();
  std::mt19937 rng_;
  nlohmann::ordered_json state_;
  int next_id_ = 0;
};

}  // namespace kvframe::test
