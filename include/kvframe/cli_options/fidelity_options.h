// Block mode's fidelity knobs (common::BlockFidelity; docs/block_attention.md)
// as flags — --block-heads, --blend, --block-temperature — defined once for
// kvframe-serve, kvframe-finetune eval and bench_game_frames.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "kvframe/common/block_fidelity.h"

namespace kvframe::cli {

// Adds the three flags to `app`, bound to `fidelity` (whose values are the
// defaults --help shows) and checked against its ranges. `whose` ends each
// help text, e.g. "for sessions that ask for the server's default".
void add_fidelity_options(CLI::App& app, common::BlockFidelity& fidelity, const std::string& whose = {},
                          int32_t max_block_heads = std::numeric_limits<int32_t>::max());

}  // namespace kvframe::cli
