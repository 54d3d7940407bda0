// A deterministic frame stream of a large MOBA-like game state, for exercising
// json_blocker with realistic sizes and change patterns.
//
// Each frame is one whole gamecore JSON document:
//   match    scalars (id, tick, clock, phase, ...), score, objectives
//   heroes   10 hero objects: stats, position, items, abilities, buffs, kda
//   units    lane creeps, jungle monsters and summons (~240 by default)
//   towers   structures (22 by default)
//   shop     the item catalog (static)
//   events   the recent event log (oldest trimmed as new ones arrive)
//   debug    server diagnostics
// Every array of entities is an array of objects with a unique "id".
//
// Between frames the tick advances, about change_rate of all heroes, units and
// towers get a real value change (hp, position, target, cooldown, ...), units
// occasionally die (removed) or spawn (appended), and events are appended.
//
// Hidden fields: match.server_time_ms and the top-level "debug" object change
// every frame but are not game state a model should see; moba.rules.json (next
// to this header) drops them. Frame::changes leaves out every path under them,
// so it lists exactly the changes a partition under those rules can show.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvframe::examples::moba {

// What kvframe's MOBA tools ask of a frame (kvframe-stream's dataset records,
// bench_game_frames' query): the question the MOBA adapter was trained on.
inline constexpr const char* kCasterInstruction =
    "You are the caster of this match. In one short sentence, tell the viewers what is happening right now "
    "and which team is ahead.";

struct StreamParams {
  std::uint64_t seed = 1;
  int heroes = 10;
  int units = 240;   // population the spawner keeps topping up to
  int towers = 22;
  int events = 200;  // event log length kept
  // Fraction of heroes + units + towers changed per frame (rounded to a count;
  // 0 leaves only the clock ticking); 0.005..0.05 is realistic.
  double change_rate = 0.02;
};

// Default params with units and events scaled so the first frame is about
// `target_frame_bytes` long (sensible from ~64 KiB up; tested at 1 MiB).
StreamParams params_for_bytes(std::size_t target_frame_bytes, std::uint64_t seed = 1);

// The default population scaled by `scale` (heroes and towers at most the
// default's, at least 2): small matches for short frames, big ones for long.
StreamParams scaled_params(double scale, std::uint64_t seed, double change_rate);

struct PathChange {
  enum class Kind { kModified, kAdded, kRemoved };
  Kind kind;
  // RFC 6901 pointer. kModified: the value that changed (a leaf, or a whole
  // value whose shape changed), in the current frame. kAdded: the added array
  // element, in the current frame. kRemoved: the removed array element, at its
  // index in the previous frame.
  std::string pointer;
};

const char* change_kind_name(PathChange::Kind kind);

struct Frame {
  std::uint64_t number = 0;
  std::string json;  // the whole frame, minified (nlohmann dump())
  // Deltas against the previous frame; empty for frame 0. Applied with
  // nlohmann (merge_patch() / patch()) to the previous frame they give this one.
  std::string merge_patch;  // RFC 7386; arrays that changed are sent whole
  std::string json_patch;   // RFC 6902; removes, then adds, then replaces
  // Every changed pointer, in document order, except under the hidden fields.
  std::vector<PathChange> changes;
};

class World;

class StreamGenerator {
 public:
  explicit StreamGenerator(StreamParams params);
  ~StreamGenerator();
  StreamGenerator(StreamGenerator&&) noexcept;
  StreamGenerator& operator=(StreamGenerator&&) noexcept;

  // Frame 0 on the first call, then one frame later per call.
  Frame next();

 private:
  std::unique_ptr<World> world_;
  std::uint64_t frames_ = 0;
};

}  // namespace kvframe::examples::moba
