// The exit status of every kvframe program: one convention, so a script or a
// probe reads any of them the same way. docs/tools.md ("Exit codes") lists
// what each program returns.
#pragma once

#include "kvframe/common/error.h"

namespace kvframe {

// Plain ints (main returns them), named so a program says which it means.
enum ExitCode : int {
  kExitOk = 0,           // done; also --help
  kExitUsage = 1,        // the command line is wrong: an unknown option, a value out of range, a missing argument
  kExitBadInput = 2,     // a file, model, schema, key, setting or server it was given cannot be used
  kExitFailed = 3,       // the inputs were fine and the run failed: the device, libtorch, a socket, training
  kExitCheckFailed = 4,  // it ran, and what it checks does not hold: frames differ, a mismatch, no server answered
};

// main's status once CLI11's app.exit(e) has printed a parse error or the
// help: CLI11 returns 0 for --help, its own codes (100 and up) otherwise.
constexpr int usage_exit(int cli11_status) { return cli11_status == 0 ? kExitOk : kExitUsage; }

// The status a library error ends a program with: kExitFailed for what went
// wrong while running (the device, libtorch, a full context, a port taken),
// kExitBadInput for everything about what the program was given.
int exit_code(ErrorCode code);

}  // namespace kvframe
