"""The exit codes of every kvframe program, the Python benches included: one
convention (include/kvframe/common/exit_codes.h; docs/tools.md, "Exit codes"),
so a script reads any of them the same way. ctest `abi_mirrors` checks these
values against the C++ header."""

OK = 0            # done; also --help
USAGE = 1         # the command line is wrong
BAD_INPUT = 2     # a file, model, setting, package or server it was given cannot be used
RUN_FAILED = 3    # the inputs were fine and the run failed
CHECK_FAILED = 4  # it ran, and what it checks does not hold
