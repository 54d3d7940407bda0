#include "kvframe/cli_options/command_line.h"

#include "kvframe/common/exit_codes.h"

namespace kvframe::cli {

std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return usage_exit(app.exit(e));
  }
  return std::nullopt;
}

}  // namespace kvframe::cli
