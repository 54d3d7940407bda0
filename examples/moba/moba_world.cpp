// Building the match: World's constructor and the entity factories; the
// frame-to-frame changes are in moba_world_advance.cpp.
#include "moba/moba_world.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace kvframe::examples::moba {
namespace {

constexpr std::int64_t kServerEpochMs = 1718000000000;

const std::vector<std::string> kHeroNames = {
    "Stormcaller", "Ironhide", "Nightveil", "Emberfang", "Tidebinder", "Ashwalker",
    "Frostwarden", "Sunblade", "Voidseer", "Thornmother", "Galeknight", "Bonechanter"};
const std::vector<std::string> kRoles = {"carry", "mid", "offlane", "support", "hard_support"};
const std::vector<std::string> kRanks = {"Herald", "Guardian", "Crusader", "Archon",
                                         "Legend", "Ancient",  "Divine"};
const std::vector<std::string> kBehaviors = {"push_lane", "guard_camp", "follow_owner", "chase",
                                             "return_to_camp"};
const std::vector<std::string> kLanes = {"top", "mid", "bot"};
const std::vector<std::string> kWordsA = {"Storm", "Frost", "Shadow", "Blade", "Arcane",
                                          "Iron",  "Blood", "Sun",    "Void",  "Thorn"};
const std::vector<std::string> kWordsB = {"Strike", "Nova", "Leap",  "Ward",
                                          "Surge",  "Chain", "Veil", "Roar"};
const std::vector<std::string> kItemPrefixes = {"iron", "shadow", "arcane", "swift",
                                                "blood", "frost", "storm", "sacred"};
const std::vector<std::string> kItemNouns = {"blade", "boots", "staff", "shield", "ring", "cloak"};
const std::vector<std::string> kStatNames = {"attack_damage", "armor",      "magic_resist",
                                             "move_speed",    "hp_regen",   "mana_regen",
                                             "attack_speed",  "spell_power"};
const std::vector<std::string> kAmbientEvents = {"ward_placed", "rune_spawned", "ping",
                                                 "courier_delivered", "smoke_used"};

struct UnitKind {
  const char* kind;
  const char* name;
  std::int64_t hp, damage, range, bounty;
};
const std::vector<UnitKind> kUnitKinds = {
    {"lane_creep", "melee_creep", 550, 21, 100, 38},
    {"lane_creep", "ranged_creep", 300, 24, 500, 48},
    {"lane_creep", "siege_creep", 875, 40, 690, 70},
    {"jungle_monster", "wolf", 450, 30, 100, 42},
    {"jungle_monster", "golem", 950, 38, 100, 65},
    {"jungle_monster", "harpy", 400, 26, 450, 40},
    {"summon", "treant", 600, 28, 100, 20},
    {"summon", "spirit_bear", 1100, 45, 100, 90},
};

std::string title(std::string word) {
  if (!word.empty() && word[0] >= 'a' && word[0] <= 'z') word[0] = static_cast<char>(word[0] - 32);
  return word;
}

Json position(DeterministicRng& rng) {
  Json pos;
  pos["x"] = from_tenths(rng.between(-kMapHalfTenths, kMapHalfTenths));
  pos["y"] = from_tenths(rng.between(-kMapHalfTenths, kMapHalfTenths));
  return pos;
}

std::string clock(std::int64_t tick) {
  const std::int64_t seconds = tick / kTickRate;
  char text[32];
  std::snprintf(text, sizeof text, "%02lld:%02lld", static_cast<long long>(seconds / 60),
                static_cast<long long>(seconds % 60));
  return text;
}

const char* phase(std::int64_t tick) {
  const std::int64_t minutes = tick / kTickRate / 60;
  return minutes < 10 ? "laning" : minutes < 30 ? "midgame" : "lategame";
}

bool is_day(std::int64_t tick) { return tick / (kTickRate * 300) % 2 == 0; }  // 5 minutes each

const char* team_of(int index) { return index % 2 == 0 ? "radiant" : "dire"; }

}  // namespace

void set_match_time(Json& match, std::int64_t tick) {
  match["tick"] = tick;
  match["clock"] = clock(tick);
  match["phase"] = phase(tick);
  match["is_day"] = is_day(tick);
}

World::World(const StreamParams& params) : params_(params), rng_(params.seed) {
  state_["match"] = make_match();
  Json shop = make_shop();  // first: heroes carry items from its catalog
  state_["heroes"] = Json::array();
  for (int i = 0; i < params_.heroes; ++i) state_["heroes"].push_back(make_hero(i, shop["catalog"]));
  state_["units"] = Json::array();
  const std::int64_t tick = i64(state_["match"]["tick"]);
  for (int i = 0; i < params_.units; ++i) state_["units"].push_back(make_unit(tick));
  state_["towers"] = Json::array();
  for (int i = 0; i < params_.towers; ++i) state_["towers"].push_back(make_tower(i));
  state_["shop"] = std::move(shop);
  state_["events"] = Json::array();
  // A full log from the start, so frame sizes do not grow over the first frames.
  for (int i = 0; i < params_.events; ++i) add_ambient_event();
  write_debug();
}

Json World::make_match() {
  const std::int64_t tick = 27000 + rng_.between(0, 9000);  // 15..20 minutes in
  Json match;
  char id[32];
  std::snprintf(id, sizeof id, "match-%08llx", static_cast<unsigned long long>(params_.seed));
  match["id"] = id;
  match["mode"] = "ranked_5v5";
  match["map"] = "rift_v3";
  match["patch"] = "7.35c";
  set_match_time(match, tick);
  match["server_time_ms"] = kServerEpochMs;
  match["tick_rate"] = kTickRate;
  match["next_wave_tick"] = tick + 900;
  match["score"] = {{"radiant", rng_.between(0, 20)}, {"dire", rng_.between(0, 20)}};
  match["objectives"] = {{"roshan_alive", true},
                         {"roshan_respawn_tick", 0},
                         {"glyph_ready", {{"radiant", true}, {"dire", true}}}};
  return match;
}

Json World::make_hero(int index, const Json& catalog) {
  const std::string id = "hero_" + std::to_string(index);
  const int level = rng_.between(8, 18);
  const std::int64_t hp_max = 900 + level * 70, mana_max = 500 + level * 35;
  Json hero;
  hero["id"] = id;
  hero["name"] = kHeroNames[static_cast<std::size_t>(index) % kHeroNames.size()];
  hero["player"] = {{"id", "player_" + std::to_string(index)},
                    {"rank", kRanks[static_cast<std::size_t>(rng_.below(kRanks.size()))]},
                    {"mmr", rng_.between(2000, 6000)}};
  hero["team"] = team_of(index);
  hero["role"] = kRoles[static_cast<std::size_t>(index / 2) % kRoles.size()];
  hero["level"] = level;
  hero["xp"] = level * 900 + rng_.between(0, 800);
  hero["gold"] = rng_.between(200, 3000);
  hero["hp"] = hp_max * rng_.between(40, 100) / 100;
  hero["hp_max"] = hp_max;
  hero["mana"] = mana_max * rng_.between(20, 100) / 100;
  hero["mana_max"] = mana_max;
  hero["alive"] = true;
  hero["respawn_ticks"] = 0;
  hero["move_speed"] = rng_.between(280, 330);
  hero["position"] = position(rng_);
  hero["facing_deg"] = rng_.between(0, 359);
  hero["vision"] = {{"day_range", 1800}, {"night_range", 800}};
  hero["status"] = {{"stunned", false},   {"silenced", false}, {"rooted", false},
                    {"invisible", false}, {"channeling", false}};
  Json stats;
  for (const std::string& name : kStatNames) stats[name] = rng_.between(5, 120);
  hero["stats"] = stats;
  hero["items"] = Json::array();
  for (std::size_t slot = 0; slot < kItemSlots; ++slot) {
    const bool filled = rng_.chance(0.7);
    const std::string item =
        filled ? str(catalog[static_cast<std::size_t>(rng_.below(catalog.size()))]["id"]) : "";
    hero["items"].push_back(
        {{"slot", slot}, {"item", item}, {"charges", filled ? rng_.between(0, 3) : 0}});
  }
  hero["abilities"] = Json::array();
  for (const char* key : {"q", "w", "e", "r"}) {
    const bool ultimate = key[0] == 'r';
    const int base = rng_.between(6, 14) * 10;
    const std::int64_t radius = rng_.between(20, 60) * 10;
    Json damage = Json::array();
    for (int rank = 1; rank <= (ultimate ? 3 : 4); ++rank) damage.push_back(base * rank);
    const std::string& first_word = rng_.pick(kWordsA);
    const std::string name = first_word + " " + rng_.pick(kWordsB);
    hero["abilities"].push_back(
        {{"id", id + "_" + key},
         {"key", key},
         {"name", name},
         {"level", rng_.between(1, ultimate ? 3 : 4)},
         {"cooldown_ticks", 0},
         {"cooldown_max_ticks", rng_.between(4, ultimate ? 40 : 16) * kTickRate},
         {"mana_cost", rng_.between(6, 20) * 10},
         {"damage", damage},
         {"targeting", ultimate ? "area" : rng_.chance(0.5) ? "unit" : "point"},
         {"description", name + " deals " + std::to_string(base) + " magic damage per level to "
                             "enemies within " + std::to_string(radius) +
                             " units and slows them by 20% for 2.5 seconds. Damage is reduced by "
                             "magic resistance; the slow is removed by a basic dispel."}});
  }
  hero["buffs"] = Json::array();
  hero["talents"] = Json::array();
  for (int tier = 10; tier <= level; tier += 5) {
    const int bonus = rng_.between(5, 30);
    hero["talents"].push_back(
        {{"level", tier}, {"choice", "+" + std::to_string(bonus) + " " + rng_.pick(kStatNames)}});
  }
  hero["kda"] = {{"kills", rng_.between(0, 10)},
                 {"deaths", rng_.between(0, 8)},
                 {"assists", rng_.between(0, 15)},
                 {"last_hits", rng_.between(20, 250)},
                 {"denies", rng_.between(0, 20)}};
  return hero;
}

Json World::make_unit(std::int64_t tick) {
  const UnitKind& kind = kUnitKinds[static_cast<std::size_t>(rng_.below(kUnitKinds.size()))];
  const bool neutral = std::string(kind.kind) == "jungle_monster";
  Json unit;
  unit["id"] = next_id("unit");
  unit["kind"] = kind.kind;
  unit["name"] = kind.name;
  unit["team"] = neutral ? "neutral" : team_of(rng_.between(0, 1));
  unit["lane"] = neutral ? "jungle" : rng_.pick(kLanes);
  unit["hp"] = kind.hp;
  unit["hp_max"] = kind.hp;
  unit["armor"] = rng_.between(0, 4);
  unit["damage"] = kind.damage;
  unit["attack_range"] = kind.range;
  unit["move_speed"] = neutral ? 300 : 325;
  unit["position"] = position(rng_);
  unit["facing_deg"] = rng_.between(0, 359);
  unit["state"] = "moving";
  unit["target"] = "";
  unit["ai"] = {{"behavior", rng_.pick(kBehaviors)},
                {"aggro_range", rng_.between(3, 8) * 100},
                {"leash_range", rng_.between(8, 15) * 100},
                {"waypoint", position(rng_)}};
  unit["owner"] = std::string(kind.kind) == "summon" ? random_hero_id() : "";
  unit["spawn_tick"] = tick;
  unit["bounty"] = {{"gold", kind.bounty}, {"xp", kind.bounty * 3 / 2}};
  return unit;
}

Json World::make_tower(int index) {
  const int tier = index / 6 % 4 + 1;  // 6 per tier: 2 teams x 3 lanes
  const std::int64_t hp = 1800 + tier * 200;
  Json tower;
  tower["id"] = "tower_" + std::to_string(index);
  tower["kind"] = tier == 4 ? "base_tower" : "tower";
  tower["team"] = team_of(index);
  tower["lane"] = tier == 4 ? "base" : kLanes[static_cast<std::size_t>(index / 2) % kLanes.size()];
  tower["tier"] = tier;
  tower["hp"] = hp;
  tower["hp_max"] = hp;
  tower["armor"] = 10 + tier * 4;
  tower["position"] = position(rng_);
  tower["target"] = "";
  tower["destroyed"] = false;
  return tower;
}

Json World::make_shop() {
  Json catalog = Json::array();
  for (const std::string& prefix : kItemPrefixes) {
    for (const std::string& noun : kItemNouns) {
      const std::string& stat = rng_.pick(kStatNames);
      Json stats;
      stats[stat] = rng_.between(5, 40);
      catalog.push_back({{"id", "item_" + prefix + "_" + noun},
                         {"name", title(prefix) + " " + title(noun)},
                         {"cost", rng_.between(5, 60) * 50},
                         {"category", noun == "boots" ? "movement" : "equipment"},
                         {"stats", stats}});
    }
  }
  return {{"restock_tick", 0}, {"catalog", catalog}};
}

void World::add_event(const std::string& type, const std::string& actor, const std::string& target,
                      std::int64_t value) {
  Json event;
  event["id"] = next_id("ev");
  event["tick"] = state_["match"]["tick"];
  event["type"] = type;
  event["actor"] = actor;
  event["target"] = target;
  event["value"] = value;
  event["position"] = position(rng_);
  event["text"] = actor + " " + type + (target.empty() ? "" : " " + target) + " (" +
                  std::to_string(value) + ")";
  state_["events"].push_back(std::move(event));
}

void World::add_ambient_event() {
  const std::string& type = rng_.pick(kAmbientEvents);
  const std::string& actor = random_hero_id();
  add_event(type, actor, "", rng_.between(0, 500));
}

void World::write_debug() {
  const std::int64_t server_ms = kServerEpochMs + static_cast<std::int64_t>(frame_) * 100 +
                                 rng_.between(0, 9);
  state_["match"]["server_time_ms"] = server_ms;
  Json& debug = state_["debug"];
  debug["frame"] = frame_;
  debug["server_time_ms"] = server_ms;
  debug["sim_us"] = rng_.between(800, 2500);
  debug["entities"] = state_["heroes"].size() + state_["units"].size() + state_["towers"].size();
}

std::string World::next_id(const char* prefix) { return prefix + ("_" + std::to_string(++serial_)); }

const std::string& World::random_hero_id() {
  static const std::string kNone;
  const Json& heroes = state_["heroes"];
  if (heroes.empty()) return kNone;
  return str(heroes[static_cast<std::size_t>(rng_.below(heroes.size()))]["id"]);
}

}  // namespace kvframe::examples::moba
