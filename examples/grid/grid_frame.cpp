// GridGame::frame(): the state as JSON, written the way a straightforward
// serializer would (floats at full precision, every field every turn).
#include <nlohmann/json.hpp>

#include "grid/grid_game.h"

namespace kvframe::examples::grid {
namespace {

using Json = nlohmann::ordered_json;

// The double nearest the value: one division, exact on every platform.
double units(Micro value) { return static_cast<double>(value) / 1e6; }

const char* task_name(Task task) {
  switch (task) {
    case Task::kTravel: return "travel";
    case Task::kHarvest: return "harvest";
    case Task::kReturn: return "return";
  }
  return "unknown";
}

Json point(const Point& p) { return {{"x", units(p.x)}, {"y", units(p.y)}}; }
// Bases and targets sit on cell centers: written as whole cells.
Json cell(const Point& p) { return {{"x", p.x / 1000000}, {"y", p.y / 1000000}}; }

}  // namespace

std::string GridGame::frame() const {
  const auto n = static_cast<std::size_t>(params_.size);
  Json state;
  state["turn"] = turn_;
  state["map"] = {{"name", "Aster Reach"},
                  {"size", params_.size},
                  {"resource", "crystal"},
                  {"layout", params_.flat_grid ? "grid is row-major, size * size cells" : "grid[row][col]"}};
  Json grid = Json::array();
  for (std::size_t row = 0; row < n; ++row) {
    Json cells = Json::array();
    for (std::size_t col = 0; col < n; ++col) cells.push_back(units(cells_[row * n + col].amount));
    if (params_.flat_grid) {
      for (auto& amount : cells) grid.push_back(std::move(amount));
    } else {
      grid.push_back(std::move(cells));
    }
  }
  state["grid"] = std::move(grid);
  state["bases"] = Json::array();
  for (const Base& base : bases_) {
    state["bases"].push_back({{"id", base.id},
                              {"owner", base.owner},
                              {"pos", cell(base.pos)},
                              {"fleets", base.fleets},
                              {"stock", units(base.stock)},
                              {"delivered", units(base.delivered)}});
  }
  state["fleets"] = Json::array();
  for (const Fleet& fleet : fleets_) {
    state["fleets"].push_back({{"id", fleet.id},
                               {"owner", bases_[static_cast<std::size_t>(fleet.base)].owner},
                               {"task", task_name(fleet.task)},
                               {"pos", point(fleet.pos)},
                               {"target", cell(fleet.target)},
                               {"speed", units(fleet.speed)},
                               {"cargo", units(fleet.cargo)},
                               {"cargo_max", units(fleet.cargo_max)}});
  }
  return state.dump();
}

}  // namespace kvframe::examples::grid
