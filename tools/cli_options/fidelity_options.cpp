#include "kvframe/cli_options/fidelity_options.h"

namespace kvframe::cli {

void add_fidelity_options(CLI::App& app, FidelityOptions& options, const std::string& whose,
                          int32_t max_block_heads) {
  const std::string tail = (whose.empty() ? "" : ", " + whose) + "; docs/block_attention.md)";
  app.add_option("--block-heads", options.block_heads,
                 "block mode: re-encode the first N tokens of each block whose context changed, in context "
                 "(0: off" + tail)
      ->check(CLI::Range(0, max_block_heads))
      ->capture_default_str();
  app.add_option("--blend", options.blend_ratio,
                 "block mode: recompute in context this share of each changed block's tokens, those the "
                 "context moved most (0: off, 1: every token" + tail)
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--block-temperature", options.block_temperature,
                 "block mode: attention logits against block keys divided by it (1: off" + tail)
      ->check(CLI::Range(0.25, 4.0))
      ->capture_default_str();
}

}  // namespace kvframe::cli
