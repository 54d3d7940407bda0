// FUZZ_CHECK: what must hold for every input, whatever the bytes. A violation
// prints what broke and traps, so libFuzzer saves the input and the replay
// test fails. `what` (a std::string expression) is only evaluated on failure.
// Shared by every fuzz target.
#pragma once

#include <cstdio>
#include <string>

#define FUZZ_CHECK(condition, what)                                                  \
  do {                                                                               \
    if (!(condition)) ::kvframe::fuzz::invariant_violated(what, __FILE__, __LINE__); \
  } while (false)

namespace kvframe::fuzz {

[[noreturn]] inline void invariant_violated(const std::string& what, const char* file, int line) {
  std::fprintf(stderr, "fuzz invariant violated (%s:%d): %s\n", file, line, what.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

}  // namespace kvframe::fuzz
