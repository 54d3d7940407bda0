#include "kvframe/cli_options/fidelity_options.h"

namespace kvframe::cli {

void add_fidelity_options(CLI::App& app, common::BlockFidelity& fidelity, const std::string& whose,
                          int32_t max_block_heads) {
  using common::BlockFidelity;
  const std::string tail = (whose.empty() ? "" : ", " + whose) + "; docs/block_attention.md)";
  app.add_option("--block-heads", fidelity.block_heads,
                 "block mode: re-encode the first N tokens of each block whose context changed, in context "
                 "(0: off" + tail)
      ->check(CLI::Range(0, max_block_heads))
      ->capture_default_str();
  app.add_option("--blend", fidelity.blend_ratio,
                 "block mode: recompute in context this share of each changed block's tokens, those the "
                 "context moved most (0: off, 1: every token" + tail)
      ->check(CLI::Range(0.0f, BlockFidelity::kMaxBlendRatio))
      ->capture_default_str();
  app.add_option("--block-temperature", fidelity.block_temperature,
                 "block mode: attention logits against block keys divided by it (1: off" + tail)
      ->check(CLI::Range(BlockFidelity::kMinBlockTemperature, BlockFidelity::kMaxBlockTemperature))
      ->capture_default_str();
}

}  // namespace kvframe::cli
