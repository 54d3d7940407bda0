// Block mode's fidelity knobs (runtime::SessionParams::block_heads,
// blend_ratio, block_temperature; docs/block_attention.md) as flags —
// --block-heads, --blend, --block-temperature — defined once for
// kvframe-serve, kvframe-finetune eval and bench_game_frames.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

namespace kvframe::cli {

struct FidelityOptions {
  int32_t block_heads = 0;      // 0: off
  float blend_ratio = 0;        // 0: off, 1: every token in context
  float block_temperature = 1;  // 1: off
};

// Adds the three flags to `app`, bound to `options` (whose values are the
// defaults --help shows). `whose` ends each help text, e.g. "for sessions
// that ask for the server's default".
void add_fidelity_options(CLI::App& app, FidelityOptions& options, const std::string& whose = {},
                          int32_t max_block_heads = std::numeric_limits<int32_t>::max());

}  // namespace kvframe::cli
