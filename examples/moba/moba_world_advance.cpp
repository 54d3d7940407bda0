// World::advance() and the changes it makes; building the match is in moba_world.cpp.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "moba/moba_world.h"

namespace kvframe::examples::moba {
namespace {

constexpr std::int64_t kTicksPerFrame = 3;  // a decision every 100 ms
constexpr std::size_t kMaxBuffs = 3;
const std::vector<std::string> kBuffs = {"haste", "regeneration", "double_damage", "shielded",
                                         "invisible", "slowed", "stunned", "silenced"};
const std::vector<std::string> kBuffSources = {"rune", "ability", "item", "tower", "neutral"};

}  // namespace

void World::advance() {
  ++frame_;
  Json& match = state_["match"];
  const std::int64_t tick = i64(match["tick"]) + kTicksPerFrame;
  set_match_time(match, tick);
  if (tick >= i64(match["next_wave_tick"])) match["next_wave_tick"] = tick + 900;

  const std::size_t heroes = state_["heroes"].size(), units = state_["units"].size();
  const std::size_t entities = heroes + units + state_["towers"].size();
  const double rate = std::clamp(params_.change_rate, 0.0, 1.0);
  const auto count = static_cast<std::size_t>(std::lround(rate * double(entities)));
  // Distinct entities: a partial Fisher-Yates over all entity indices.
  std::vector<std::size_t> order(entities);
  for (std::size_t i = 0; i < entities; ++i) order[i] = i;
  for (std::size_t i = 0; i < count; ++i) {
    std::swap(order[i], order[i + static_cast<std::size_t>(rng_.below(entities - i))]);
    const std::size_t e = order[i];
    if (e < heroes) {
      change_hero(state_["heroes"][e]);
    } else if (e < heroes + units) {
      change_unit(state_["units"][e - heroes]);
    } else {
      change_tower(state_["towers"][e - heroes - units]);
    }
  }
  remove_dead_units();
  spawn_units();
  if (rng_.chance(0.5)) add_ambient_event();
  trim_events();
  write_debug();
}

void World::change_hero(Json& hero) {
  if (!hero["alive"].get<bool>()) {
    const std::int64_t left = i64(hero["respawn_ticks"]) - 10 * kTicksPerFrame;
    if (left > 0) {
      hero["respawn_ticks"] = left;
      return;
    }
    hero["respawn_ticks"] = 0;
    hero["alive"] = true;
    hero["hp"] = hero["hp_max"];
    hero["mana"] = hero["mana_max"];
    add_event("hero_respawned", str(hero["id"]), "", 0);
    return;
  }
  switch (rng_.below(6)) {
    case 0: move(hero["position"], 600); break;
    case 1: damage(hero, rng_.between(30, 250)); break;
    case 2: cast_ability(hero); break;
    case 3: buy_item(hero); break;
    case 4: toggle_buff(hero); break;
    default: {
      const std::int64_t xp = i64(hero["xp"]) + rng_.between(40, 300);
      hero["xp"] = xp;
      if (xp >= (i64(hero["level"]) + 1) * 900 && i64(hero["level"]) < 30) {
        hero["level"] = i64(hero["level"]) + 1;
      }
    }
  }
  if (i64(hero["hp"]) == 0) kill_hero(hero);
}

void World::change_unit(Json& unit) {
  switch (rng_.below(3)) {
    case 0: move(unit["position"], 300); break;
    case 1: damage(unit, rng_.between(15, 160)); break;
    default:
      if (!retarget(unit)) move(unit["position"], 300);
  }
}

void World::change_tower(Json& tower) {
  if (tower["destroyed"].get<bool>()) return;  // rubble does not change
  if (rng_.chance(0.5) && retarget(tower)) return;
  damage(tower, rng_.between(20, 120));
  if (i64(tower["hp"]) == 0) {
    tower["destroyed"] = true;
    tower["target"] = "";
    add_event("tower_destroyed", random_hero_id(), str(tower["id"]), 0);
  }
}

void World::move(Json& position, int max_step_tenths) {
  for (const char* axis : {"x", "y"}) {
    const int size = rng_.between(1, max_step_tenths);
    const int step = rng_.chance(0.5) ? size : -size;
    int to = to_tenths(position[axis].get<double>()) + step;
    if (to > kMapHalfTenths || to < -kMapHalfTenths) to -= 2 * step;  // bounce off the edge
    position[axis] = from_tenths(to);
  }
}

void World::damage(Json& entity, std::int64_t amount) {
  entity["hp"] = std::max<std::int64_t>(0, i64(entity["hp"]) - amount);
}

bool World::retarget(Json& entity) {
  const std::string current = str(entity["target"]);
  const Json& units = state_["units"];
  std::string target;
  if (current.empty() || rng_.chance(0.7)) {
    target = units.empty() || rng_.chance(0.2)
                 ? random_hero_id()
                 : str(units[static_cast<std::size_t>(rng_.below(units.size()))]["id"]);
  }
  if (target == current || target == str(entity["id"])) target.clear();
  if (target == current) return false;  // nothing else to aim at
  entity["target"] = target;
  if (entity.contains("state")) entity["state"] = target.empty() ? "moving" : "attacking";
  return true;
}

void World::cast_ability(Json& hero) {
  const std::int64_t mana = i64(hero["mana"]);
  std::vector<Json*> ready;
  for (Json& ability : hero["abilities"]) {
    if (i64(ability["cooldown_ticks"]) == 0 && i64(ability["mana_cost"]) <= mana) {
      ready.push_back(&ability);
    }
  }
  if (!ready.empty()) {
    Json& ability = *ready[static_cast<std::size_t>(rng_.below(ready.size()))];
    ability["cooldown_ticks"] = ability["cooldown_max_ticks"];
    hero["mana"] = mana - i64(ability["mana_cost"]);
    add_event("ability_cast", str(hero["id"]), str(ability["id"]), i64(ability["level"]));
    return;
  }
  bool cooling = false;
  for (Json& ability : hero["abilities"]) {
    const std::int64_t left = i64(ability["cooldown_ticks"]);
    if (left > 0) {
      ability["cooldown_ticks"] = std::max<std::int64_t>(0, left - 90);
      cooling = true;
    }
  }
  // Nothing cooling and nothing affordable: mana is below the cheapest cost,
  // so below the maximum, and regenerating changes it.
  if (!cooling) hero["mana"] = std::min(i64(hero["mana_max"]), mana + 60);
}

void World::buy_item(Json& hero) {
  const Json& catalog = state_["shop"]["catalog"];
  const Json& item = catalog[static_cast<std::size_t>(rng_.below(catalog.size()))];
  Json& slot = hero["items"][static_cast<std::size_t>(rng_.below(kItemSlots))];
  const std::int64_t gold = i64(hero["gold"]), cost = i64(item["cost"]);
  if (gold < cost || slot["item"] == item["id"]) {
    hero["gold"] = gold + 150;  // cannot buy: farm instead
    return;
  }
  hero["gold"] = gold - cost;
  slot["item"] = item["id"];
  slot["charges"] = 0;
  add_event("item_purchased", str(hero["id"]), str(item["id"]), cost);
}

void World::toggle_buff(Json& hero) {
  Json& buffs = hero["buffs"];
  if (buffs.size() < kMaxBuffs && (buffs.empty() || rng_.chance(0.6))) {
    buffs.push_back({{"id", next_id("buff")},
                     {"name", rng_.pick(kBuffs)},
                     {"source", rng_.pick(kBuffSources)},
                     {"remaining_ticks", rng_.between(2, 20) * kTickRate}});
  } else {
    buffs.erase(0);  // the oldest runs out
  }
}

void World::kill_hero(Json& hero) {
  hero["alive"] = false;
  hero["respawn_ticks"] = 60 * kTickRate / 2 + i64(hero["level"]) * 2 * kTickRate;
  hero["buffs"] = Json::array();
  hero["kda"]["deaths"] = i64(hero["kda"]["deaths"]) + 1;
  std::vector<Json*> enemies;  // living ones, who can take the kill
  for (Json& other : state_["heroes"]) {
    if (other["team"] != hero["team"] && other["alive"].get<bool>()) enemies.push_back(&other);
  }
  if (enemies.empty()) return;
  Json& killer = *enemies[static_cast<std::size_t>(rng_.below(enemies.size()))];
  killer["kda"]["kills"] = i64(killer["kda"]["kills"]) + 1;
  killer["gold"] = i64(killer["gold"]) + 300;
  Json& score = state_["match"]["score"][str(killer["team"])];
  score = i64(score) + 1;
  add_event("hero_killed", str(killer["id"]), str(hero["id"]), 300);
}

void World::remove_dead_units() {
  auto& units = state_["units"].get_ref<Json::array_t&>();
  std::vector<std::string> dead;
  for (const Json& unit : units) {
    if (i64(unit["hp"]) == 0) dead.push_back(str(unit["id"]));
  }
  if (dead.empty()) return;
  units.erase(std::remove_if(units.begin(), units.end(),
                             [](const Json& unit) { return i64(unit["hp"]) == 0; }),
              units.end());
  for (const std::string& id : dead) {
    add_event("unit_killed", random_hero_id(), id, 0);
    for (const char* list : {"units", "towers"}) {
      for (Json& entity : state_[list]) {
        if (entity["target"] == id) {
          entity["target"] = "";
          if (entity.contains("state")) entity["state"] = "moving";
        }
      }
    }
  }
}

void World::spawn_units() {
  const auto population = static_cast<int>(state_["units"].size());
  if (population >= params_.units || !rng_.chance(0.5)) return;
  const int count = std::min(params_.units - population, rng_.between(1, 3));
  const std::int64_t tick = i64(state_["match"]["tick"]);
  for (int i = 0; i < count; ++i) state_["units"].push_back(make_unit(tick));
}

void World::trim_events() {
  auto& events = state_["events"].get_ref<Json::array_t&>();
  const auto keep = static_cast<std::size_t>(std::max(params_.events, 0));
  if (events.size() > keep) {
    events.erase(events.begin(), events.end() - static_cast<std::ptrdiff_t>(keep));
  }
}

}  // namespace kvframe::examples::moba
