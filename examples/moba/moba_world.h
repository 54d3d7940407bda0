// World: the simulated MOBA match behind StreamGenerator (internal).
//
// Holds the whole state as one ordered_json so frames are written with dump()
// in a fixed key order, byte for byte as nlohmann's patch application would
// write them. The simulation is only as deep as the sample data needs: every
// mutation is a real value change, nothing more is modelled.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/deterministic_rng.h"
#include "moba/moba_stream.h"

namespace kvframe::examples::moba {

using Json = nlohmann::ordered_json;

// Shared by moba_world.cpp (building the match) and moba_world_advance.cpp.
constexpr std::int64_t kTickRate = 30;
constexpr int kMapHalfTenths = 80000;  // the map spans -8000.0 .. 8000.0
constexpr std::size_t kItemSlots = 6;

// Positions are kept to one decimal, as integer tenths, so every value is the
// same double (and the same printed text) on every platform.
inline double from_tenths(int tenths) { return static_cast<double>(tenths) / 10.0; }
inline int to_tenths(double value) { return static_cast<int>(std::lround(value * 10.0)); }

inline std::int64_t i64(const Json& value) { return value.get<std::int64_t>(); }
inline const std::string& str(const Json& value) { return value.get_ref<const std::string&>(); }

// Writes tick and what follows from it (clock, phase, day/night) into `match`.
void set_match_time(Json& match, std::int64_t tick);

class World {
 public:
  explicit World(const StreamParams& params);

  const Json& state() const { return state_; }
  // Moves the match one frame on.
  void advance();

 private:
  // State construction.
  Json make_match();
  Json make_hero(int index, const Json& catalog);
  Json make_unit(std::int64_t tick);
  Json make_tower(int index);
  Json make_shop();
  void add_event(const std::string& type, const std::string& actor, const std::string& target,
                 std::int64_t value);
  void add_ambient_event();  // a ward, rune, ping...: keeps the log moving
  void write_debug();

  // One real change to one entity; kills are only marked (hp 0) here and
  // removed afterwards, so indices stay valid while entities are picked.
  void change_hero(Json& hero);
  void change_unit(Json& unit);
  void change_tower(Json& tower);
  void move(Json& position, int max_step_tenths);
  void damage(Json& entity, std::int64_t amount);
  bool retarget(Json& entity);  // false when there is nothing else to aim at
  void cast_ability(Json& hero);
  void buy_item(Json& hero);
  void toggle_buff(Json& hero);
  void kill_hero(Json& hero);

  void remove_dead_units();
  void spawn_units();
  void trim_events();

  std::string next_id(const char* prefix);
  const std::string& random_hero_id();

  StreamParams params_;
  DeterministicRng rng_;
  Json state_;
  std::uint64_t frame_ = 0;
  std::uint64_t serial_ = 0;  // suffix of every generated id: unique for the match
};

}  // namespace kvframe::examples::moba
