#include "gnuplot_plot.h"

#include <signal.h>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace kvframe::plot {

namespace {

// A gnuplot single-quoted string: '' stands for one quote inside.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    if (c != '\n') out += c;
  }
  return out + "'";
}

void axis(std::ostringstream& script, const PlotAxis& a, const char* name) {
  if (!a.label.empty()) script << "set " << name << "label " << quoted(a.label) << " noenhanced\n";
  if (a.log_base > 0) script << "set logscale " << name << " " << a.log_base << "\n";
  script << "set " << name << "range [" << a.range << "]\n";
}

}  // namespace

bool write_plot(const std::string& path, const PlotOptions& options, const std::vector<PlotSeries>& series) {
  std::ostringstream script;
  script.precision(10);
  bool any_point = false, right = false;
  for (size_t s = 0; s < series.size(); ++s) {
    script << "$s" << s << " << EOD\n";
    const PlotSeries& line = series[s];
    for (size_t i = 0; i < line.x.size() && i < line.y.size(); ++i) {
      if (!std::isfinite(line.x[i]) || !std::isfinite(line.y[i])) continue;
      script << line.x[i] << " " << line.y[i] << "\n";
      any_point = true;
    }
    script << "EOD\n";
    right = right || line.right_axis;
  }
  if (!any_point) return false;
  script << "set terminal pngcairo size " << options.width << "," << options.height << " font ',11'\n"
         << "set output " << quoted(path) << "\n"
         << "set title " << quoted(options.title) << " noenhanced\n";
  axis(script, options.x, "x");
  axis(script, options.y, "y");
  if (right) {
    axis(script, options.y2, "y2");
    script << "set ytics nomirror\nset y2tics\n";
  }
  script << "set grid\nset key " << options.key << " noenhanced\nplot ";
  for (size_t s = 0; s < series.size(); ++s) {
    if (s) script << ", ";
    script << "$s" << s << " using 1:2" << (series[s].right_axis ? " axes x1y2" : "") << " with "
           << series[s].style << " title " << quoted(series[s].title);
  }
  script << "\n";

  // Without gnuplot the shell exits and closes the pipe: the write must then
  // fail, not end the program with SIGPIPE before it prints its results.
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &previous);
  std::FILE* gnuplot = popen("gnuplot 2>/dev/null", "w");
  bool ok = gnuplot != nullptr;
  if (gnuplot) {
    const std::string text = script.str();
    ok = std::fwrite(text.data(), 1, text.size(), gnuplot) == text.size();
    ok = pclose(gnuplot) == 0 && ok;
  }
  sigaction(SIGPIPE, &previous, nullptr);
  return ok;
}

}  // namespace kvframe::plot
