// The simulation: building the map, then one turn at a time. The frame's JSON
// is written in grid_frame.cpp.
#include "grid/grid_game.h"

#include <algorithm>
#include <cstdio>

namespace kvframe::examples::grid {
namespace {

constexpr Micro kUnit = 1000000;
const char* const kOwners[] = {"red", "blue", "green", "gold"};
// Upkeep per fleet per turn, in millionths: the bases' stock drifts every turn.
constexpr Micro kUpkeepPerFleet = 150000;

// floor(sqrt(v)) for v >= 0, in integers so every platform agrees.
Micro isqrt(Micro v) {
  Micro r = 0;
  for (Micro bit = Micro{1} << 62; bit != 0; bit >>= 2) {
    if (v >= r + bit) {
      v -= r + bit;
      r = (r >> 1) + bit;
    } else {
      r >>= 1;
    }
  }
  return r;
}

Micro distance(const Point& a, const Point& b) {
  const Micro dx = b.x - a.x, dy = b.y - a.y;
  return isqrt(dx * dx + dy * dy);
}

Point cell_center(int col, int row) { return {col * kUnit, row * kUnit}; }

}  // namespace

std::string check_params(const GridParams& params) {
  if (params.size < 4 || params.size > 200) return "--size must be 4..200";
  if (params.fleets < 0 || params.fleets > 10000) return "--fleets must be 0..10000";
  if (params.bases < 1 || params.bases > 4) return "--bases must be 1..4";
  return "";
}

GridGame::GridGame(const GridParams& params) : params_(params), rng_(params.seed) {
  const int n = params_.size;
  cells_.resize(static_cast<std::size_t>(n * n));
  for (Cell& cell : cells_) {
    // Mostly modest cells, a few rich ones: capacity 20..200 units, skewed low.
    const Micro r = static_cast<Micro>(rng_.below(1000));
    cell.capacity = 20 * kUnit + 180 * kUnit * r * r / 1000000;
    cell.amount = cell.capacity * rng_.between(30, 95) / 100 + static_cast<Micro>(rng_.below(kUnit));
    cell.regrow_permille = rng_.between(20, 60);
  }
  const int near = n / 6, far = n - 1 - n / 6;
  const Point corners[] = {cell_center(near, near), cell_center(far, far), cell_center(far, near),
                           cell_center(near, far)};
  for (int b = 0; b < params_.bases; ++b) {
    Base base;
    base.owner = kOwners[b];
    base.id = std::string("base_") + base.owner;
    base.pos = corners[b];
    base.stock = 500 * kUnit + static_cast<Micro>(rng_.below(static_cast<std::uint64_t>(200 * kUnit)));
    bases_.push_back(base);
  }
  for (int f = 0; f < params_.fleets; ++f) {
    Fleet fleet;
    char id[24];
    std::snprintf(id, sizeof id, "fleet_%02d", f);
    fleet.id = id;
    fleet.base = f % params_.bases;
    ++bases_[static_cast<std::size_t>(fleet.base)].fleets;
    // Fleets start scattered, each on its way to a field.
    fleet.pos = {static_cast<Micro>(rng_.below(static_cast<std::uint64_t>((n - 1) * kUnit))),
                 static_cast<Micro>(rng_.below(static_cast<std::uint64_t>((n - 1) * kUnit)))};
    fleet.speed = rng_.between(600, 1400) * (kUnit / 1000);  // 0.6..1.4 cells per turn
    fleet.cargo_max = rng_.between(4, 8) * 10 * kUnit;
    fleet.harvest_rate = rng_.between(6, 12) * kUnit;
    fleet.target = pick_field(fleet);
    fleets_.push_back(fleet);
  }
}

Cell& GridGame::cell_at(const Point& p) {
  const auto col = static_cast<std::size_t>((p.x + kUnit / 2) / kUnit);
  const auto row = static_cast<std::size_t>((p.y + kUnit / 2) / kUnit);
  return cells_[row * static_cast<std::size_t>(params_.size) + col];
}

// The best of a few random cells: rich and near the fleet's base, as a
// player's rule of thumb would pick.
Point GridGame::pick_field(const Fleet& fleet) {
  const Point home = bases_[static_cast<std::size_t>(fleet.base)].pos;
  Point best;
  Micro best_score = -1;
  for (int tries = 0; tries < 4; ++tries) {
    const int col = rng_.between(0, params_.size - 1), row = rng_.between(0, params_.size - 1);
    const Point p = cell_center(col, row);
    const Micro score = cell_at(p).amount / (distance(home, p) / kUnit + 3);
    if (score > best_score) {
      best_score = score;
      best = p;
    }
  }
  return best;
}

void GridGame::move_fleet(Fleet& fleet) {
  const Micro d = distance(fleet.pos, fleet.target);
  if (d <= fleet.speed) {
    fleet.pos = fleet.target;
    return;
  }
  fleet.pos.x += (fleet.target.x - fleet.pos.x) * fleet.speed / d;
  fleet.pos.y += (fleet.target.y - fleet.pos.y) * fleet.speed / d;
}

void GridGame::harvest(Fleet& fleet) {
  Cell& cell = cell_at(fleet.pos);
  const Micro take = std::min({fleet.harvest_rate, cell.amount, fleet.cargo_max - fleet.cargo});
  cell.amount -= take;
  fleet.cargo += take;
  // Home when full, or when the cell has too little left to be worth a turn.
  if (fleet.cargo >= fleet.cargo_max || cell.amount < fleet.harvest_rate / 2) {
    fleet.task = Task::kReturn;
    fleet.target = bases_[static_cast<std::size_t>(fleet.base)].pos;
  }
}

void GridGame::unload(Fleet& fleet) {
  Base& base = bases_[static_cast<std::size_t>(fleet.base)];
  base.stock += fleet.cargo;
  base.delivered += fleet.cargo;
  fleet.cargo = 0;
  fleet.task = Task::kTravel;
  fleet.target = pick_field(fleet);
}

void GridGame::advance() {
  ++turn_;
  for (Cell& cell : cells_) cell.amount += (cell.capacity - cell.amount) * cell.regrow_permille / 1000;
  for (Fleet& fleet : fleets_) {
    const bool arrived = fleet.pos.x == fleet.target.x && fleet.pos.y == fleet.target.y;
    if (!arrived) {
      move_fleet(fleet);
    } else if (fleet.task == Task::kTravel) {
      fleet.task = Task::kHarvest;
      harvest(fleet);
    } else if (fleet.task == Task::kHarvest) {
      harvest(fleet);
    } else {
      unload(fleet);
    }
  }
  for (Base& base : bases_) base.stock = std::max<Micro>(0, base.stock - base.fleets * kUpkeepPerFleet);
}

}  // namespace kvframe::examples::grid
