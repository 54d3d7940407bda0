// Parsing a program's command line, ending it the way every kvframe program
// does on --help and on a usage error (kvframe/common/exit_codes.h).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

namespace kvframe::cli {

// Parses argv into `app`'s options. When the program is to stop here, the
// status main returns: --help printed (kExitOk) or a usage error printed with
// what was wrong (kExitUsage). Nothing when the program goes on.
std::optional<int> parse_command_line(CLI::App& app, int argc, const char* const* argv);

}  // namespace kvframe::cli
