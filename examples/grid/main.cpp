// kvframe-grid-stream: writes the grid strategy game (grid_game.h) as a
// stream of whole frames, one JSON document per line (JSONL), for
// kvframe-blocks --stream and for trying rules on a game whose every value
// moves every turn.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "kvframe/common/exit_codes.h"
#include "grid/grid_game.h"

namespace {

namespace grid = kvframe::examples::grid;

constexpr const char* kFooter =
    "Exit status: 0 written, 1 usage error (an option out of range), 2 the output\n"
    "cannot be written.\n"
    "Example: kvframe-grid-stream --frames 100 --out grid.jsonl &&\n"
    "  kvframe-blocks --stream grid.jsonl --rules examples/grid/grid.rules.json";

int write_stream(const grid::GridParams& params, int frames, std::ostream& out) {
  grid::GridGame game(params);
  for (int f = 0; f < frames && out; ++f) {
    if (f > 0) game.advance();
    out << game.frame() << '\n';
  }
  out.flush();
  return out ? kvframe::kExitOk : kvframe::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a generated grid strategy game as JSONL: one whole frame per turn. An "
               "N x N resource grid whose every cell regrows each turn (floats), fleets that "
               "move, harvest and unload every turn, a few bases. The same seed gives the same "
               "bytes on every platform."};
  app.footer(kFooter);
  grid::GridParams params;
  int frames = 100;
  std::string out_path;
  app.add_option("--seed", params.seed, "random seed (default 1)");
  app.add_option("--size", params.size, "grid side in cells, 4..200 (default 21)");
  app.add_option("--fleets", params.fleets, "number of fleets, 0..10000 (default 40)");
  app.add_option("--bases", params.bases, "number of bases, 1..4 (default 4)");
  app.add_option("--frames", frames, "frames (turns) to write, the first is turn 0 (default 100)")
      ->check(CLI::PositiveNumber);
  app.add_flag("--flat-grid", params.flat_grid,
               "write the grid as one flat row-major array instead of an array of rows");
  app.add_option("--out", out_path, "output file (default: standard output)");
  try {
    app.parse(argc, argv);
    if (const std::string problem = grid::check_params(params); !problem.empty()) {
      throw CLI::ValidationError(problem);
    }
  } catch (const CLI::ParseError& e) {
    return kvframe::usage_exit(app.exit(e));
  }
  if (out_path.empty()) return write_stream(params, frames, std::cout);
  std::ofstream file(out_path, std::ios::binary);
  const int code = file ? write_stream(params, frames, file) : kvframe::kExitBadInput;
  if (code != kvframe::kExitOk) std::fprintf(stderr, "kvframe-grid-stream: cannot write %s\n", out_path.c_str());
  return code;
}
