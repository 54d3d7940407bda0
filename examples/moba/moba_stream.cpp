#include "moba/moba_stream.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "moba/frame_delta.h"
#include "moba/moba_world.h"

namespace kvframe::examples::moba {
namespace {

// Paths that moba.rules.json drops (see the header): no block holds them, so
// listing their changes would only make the ground truth disagree with a
// partition made under the shipped rules.
bool hidden(std::string_view pointer) {
  for (std::string_view path : {"/match/server_time_ms", "/debug"}) {
    if (pointer.substr(0, path.size()) == path &&
        (pointer.size() == path.size() || pointer[path.size()] == '/')) {
      return true;
    }
  }
  return false;
}

std::size_t first_frame_bytes(const StreamParams& params) {
  return StreamGenerator(params).next().json.size();
}

}  // namespace

const char* change_kind_name(PathChange::Kind kind) {
  switch (kind) {
    case PathChange::Kind::kModified: return "modified";
    case PathChange::Kind::kAdded: return "added";
    case PathChange::Kind::kRemoved: return "removed";
  }
  return "unknown";
}

StreamParams scaled_params(double scale, std::uint64_t seed, double change_rate) {
  StreamParams p;
  p.seed = seed;
  p.change_rate = change_rate;
  p.heroes = static_cast<int>(std::clamp<long>(std::lround(10 * std::min(scale, 1.0)), 2, 10));
  p.units = static_cast<int>(std::max<long>(1, std::lround(240 * scale)));
  p.towers = static_cast<int>(std::max<long>(2, std::lround(22 * std::min(scale, 1.0))));
  p.events = static_cast<int>(std::max<long>(4, std::lround(200 * scale)));
  return p;
}

StreamParams params_for_bytes(std::size_t target_frame_bytes, std::uint64_t seed) {
  StreamParams params;
  params.seed = seed;
  // Frame size is close to linear in units + events: measure the part that
  // does not scale and the default's total, then scale both counts.
  StreamParams fixed = params;
  fixed.units = 0;
  fixed.events = 0;
  const auto fixed_bytes = static_cast<double>(first_frame_bytes(fixed));
  const auto default_bytes = static_cast<double>(first_frame_bytes(params));
  const double scale =
      std::max(0.0, (static_cast<double>(target_frame_bytes) - fixed_bytes) / (default_bytes - fixed_bytes));
  params.units = static_cast<int>(std::lround(params.units * scale));
  params.events = static_cast<int>(std::lround(params.events * scale));
  return params;
}

StreamGenerator::StreamGenerator(StreamParams params) : world_(std::make_unique<World>(params)) {}
StreamGenerator::~StreamGenerator() = default;
StreamGenerator::StreamGenerator(StreamGenerator&&) noexcept = default;
StreamGenerator& StreamGenerator::operator=(StreamGenerator&&) noexcept = default;

Frame StreamGenerator::next() {
  Frame frame;
  frame.number = frames_++;
  if (frame.number > 0) {
    const Json previous = world_->state();
    world_->advance();
    FrameDelta delta = frame_delta(previous, world_->state());
    frame.merge_patch = delta.merge_patch.dump();
    frame.json_patch = delta.json_patch.dump();
    for (PathChange& change : delta.changes) {
      if (!hidden(change.pointer)) frame.changes.push_back(std::move(change));
    }
  }
  frame.json = world_->state().dump();
  return frame;
}

}  // namespace kvframe::examples::moba
