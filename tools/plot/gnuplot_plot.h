// PNG plots of benchmark results through gnuplot (scripts/setup.sh installs
// gnuplot-nox): plotting by hand is not this project's business. Shared by the
// programs in bench/ and the tools (kvframe-finetune's loss curve) so that
// none of them writes gnuplot scripts of its own.
#pragma once

#include <string>
#include <vector>

namespace kvframe::plot {

// One line of a plot. Points whose x or y is not finite are left out, so a
// series may cover only some of the x values (e.g. a baseline run on a sample
// of frames).
struct PlotSeries {
  std::string title;
  std::vector<double> x, y;
  bool right_axis = false;  // against the y2 axis
  // gnuplot's `with` clause: "linespoints lw 2 pt 7", "lines lw 1", "points pt 7 ps 0.5".
  std::string style = "linespoints lw 2 pt 7";
};

struct PlotAxis {
  std::string label;        // empty: none
  int log_base = 0;         // 0: linear; else logarithmic in this base
  std::string range = "*:*";  // gnuplot's range without brackets: "0:*", "0:100"
};

struct PlotOptions {
  std::string title;  // shown as given (no gnuplot "enhanced" markup)
  PlotAxis x, y;
  PlotAxis y2;        // drawn only when a series uses the right axis
  std::string key = "top right";
  int width = 900, height = 540;
};

// Writes a PNG to `path`. Returns false when gnuplot is missing or fails, or
// when there is nothing to draw; the caller says so on stderr.
bool write_plot(const std::string& path, const PlotOptions& options, const std::vector<PlotSeries>& series);

}  // namespace kvframe::plot
