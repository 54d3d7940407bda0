// Block mode's fidelity knobs (docs/block_attention.md): how much of full
// attention a session buys back for the blocks it encoded alone. Defined
// once, here, for every layer that holds them — the runtime's SessionParams,
// the server's defaults and SessionConfig, the CLI flags, the evaluation —
// each copying the struct whole, so a new knob is added here and where it is
// used (runtime/engine/block_context.cpp) and sent (the wire, the clients).
// Header-only and free of torch: the server's core holds it too.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace kvframe::common {

// A value outside a knob's range (its limits below; NaN is in none) is
// refused: by Session::open (kInvalidArgument), by the server at OpenSession
// (BadRequest), by the flags.
struct BlockFidelity {
  // After assembling a frame, re-encode the first `block_heads` tokens of
  // every block whose context changed (its own tokens, an earlier block's
  // or its position), in context: attending to everything before them, as
  // full attention would, instead of starting blind like a block encoded
  // alone (its "attention sink" at the start is what misleads the final
  // block most; EPIC, arXiv 2410.15332). Costs those tokens per frame,
  // counted in QueryReport::tokens_encoded. 0: off; at least every block's
  // length: every block token re-encoded in context, which is `full`
  // attention (to fp32 rounding). Never negative.
  int32_t block_heads = 0;
  // CacheBlend (arXiv 2405.16444): after assembling a frame, every token of
  // the blocks whose context changed runs the model's first layer in
  // context; then, in each block, the ceil(blend_ratio x its length) tokens
  // whose second-layer values moved most from the block's own (besides its
  // `block_heads` first tokens) run on through every layer, and the others
  // keep their block KV above the second layer. Costs, in
  // QueryReport::tokens_encoded, the tokens that run on plus the others'
  // share of the layers they ran (2 of 30 on the default model, counted
  // whole). 0: off; kMaxBlendRatio: every block token in context, which is
  // `full` attention (to fp32 rounding).
  float blend_ratio = 0;
  static constexpr float kMaxBlendRatio = 1;
  // APE's attention temperature (arXiv 2502.05431): blocks' keys are stored
  // divided by it, so every token that attends to a block — the final
  // block, the answer — sees that block's attention logits divided by it:
  // below 1 sharpens what blocks encoded alone spread out. The prefix and
  // tokens the other knobs recompute in context keep their keys. Free at
  // query time (the keys are scaled once, when a block is encoded). 1: off.
  float block_temperature = 1;
  static constexpr float kMinBlockTemperature = 0.25f;
  static constexpr float kMaxBlockTemperature = 4;
};

// A knob's value or limit as people write it (0.25, 4, 1.5, not
// std::to_string's 0.250000), for the range errors of the runtime and the
// server.
template <typename T>
std::string knob_text(T value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace kvframe::common
