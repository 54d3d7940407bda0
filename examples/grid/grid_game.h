// A small turn-based strategy game whose state is hard on block reuse, for
// exercising json_blocker's quantize and arrays rules (docs/your_game.md).
//
//   grid    an N x N resource field; every cell regrows toward its capacity
//           every turn, so every amount (a float) changes every turn
//   bases   a few bases; their stock drifts every turn (fleet upkeep) and
//           jumps when a fleet unloads
//   fleets  K fleets that travel to a rich cell, harvest it for a few turns
//           (cargo grows, the cell shrinks), carry the cargo home and go again
//
// Frames are the whole state as JSON, written the way a straightforward game
// would: floats at full precision, every fleet with its position. Nothing in
// the game is tuned for kvframe; grid.rules.json (beside this header) is.
//
// Deterministic for a seed on every platform: the state is kept in integer
// millionths (DeterministicRng for draws, no floating-point arithmetic), and
// written as the double nearest each value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/deterministic_rng.h"

namespace kvframe::examples::grid {

struct GridParams {
  std::uint64_t seed = 1;
  int size = 21;    // the grid is size x size cells
  int fleets = 40;
  int bases = 4;    // 1..4, one near each corner
  // The grid as one flat row-major array of size * size amounts instead of an
  // array of rows (how many tile-map engines store it).
  bool flat_grid = false;
};

// A param out of range, as a sentence; empty when all are fine.
std::string check_params(const GridParams& params);

// Amounts and positions in millionths of a unit or cell.
using Micro = std::int64_t;

struct Cell {
  Micro amount = 0, capacity = 0;
  int regrow_permille = 0;  // share of the gap to capacity that regrows per turn
};

struct Point {
  Micro x = 0, y = 0;
};

struct Base {
  std::string id, owner;
  Point pos;
  Micro stock = 0, delivered = 0;
  int fleets = 0;
};

enum class Task { kTravel, kHarvest, kReturn };

struct Fleet {
  std::string id;
  int base = 0;  // index into bases
  Task task = Task::kTravel;
  Point pos, target;
  Micro speed = 0, cargo = 0, cargo_max = 0, harvest_rate = 0;
};

class GridGame {
 public:
  explicit GridGame(const GridParams& params);  // params must pass check_params

  // The current turn's whole state: one line of minified JSON.
  std::string frame() const;
  // Plays one turn: cells regrow, fleets move, harvest and unload, bases pay upkeep.
  void advance();
  std::int64_t turn() const { return turn_; }

 private:
  void move_fleet(Fleet& fleet);
  void harvest(Fleet& fleet);
  void unload(Fleet& fleet);
  Point pick_field(const Fleet& fleet);
  Cell& cell_at(const Point& p);

  GridParams params_;
  DeterministicRng rng_;
  std::int64_t turn_ = 0;
  std::vector<Cell> cells_;  // row-major
  std::vector<Base> bases_;
  std::vector<Fleet> fleets_;
};

}  // namespace kvframe::examples::grid
