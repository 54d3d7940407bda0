// Block mode's fidelity knobs (common::BlockFidelity; docs/block_attention.md)
// as flags, one per knob of protocol/options.json (its flag, help and range),
// for kvframe-serve, kvframe-finetune eval and bench_game_frames.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "kvframe/common/block_fidelity.h"

namespace kvframe::cli {

// Whose ranges the flags check: the engine's, or the server's (a knob's
// wire_max, what a session may ask for, where it is lower).
enum class KnobLimits { kEngine, kServer };

// Adds a flag per knob to `app`, bound to `fidelity` (whose values are the
// defaults --help shows) and checked against its range. `whose` ends each
// help text, e.g. "for sessions that ask for the server's default".
void add_fidelity_options(CLI::App& app, common::BlockFidelity& fidelity, const std::string& whose = {},
                          KnobLimits limits = KnobLimits::kEngine);

}  // namespace kvframe::cli
