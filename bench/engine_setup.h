// What the engine benchmarks share: the model options (kvframe::cli's
// --model, --device, --dtype, --threads, --lora, and --shape, --no-cuda-graphs),
// an Engine loaded from them, and a frame's token count as the engine sees it.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kvframe/cli_options/model_options.h"
#include "kvframe/json_blocker/rules.h"
#include "kvframe/runtime_engine/session.h"

namespace kvframe::bench {

struct EngineOptions : cli::ModelOptions {
  std::string shape;  // non-empty: random weights of this shape (model_shapes.h)
  std::string game;   // whose shipped adapter --lora auto picks (runtime::resolve_lora)
  bool cuda_graphs = true;  // decoding steps on CUDA from CUDA graphs (ModelParams::cuda_graphs)
};
void add_engine_options(CLI::App& app, EngineOptions& options);

// --model's weights, or random weights of --shape with --model's tokenizer
// and chat template (a random-weight model has neither; the shape's n_vocab
// becomes the tokenizer's and its context at least `min_context`). Prints
// what it loads on stderr; on failure prints the error and what to do as
// `program: ...` and returns the error.
Result<std::unique_ptr<runtime::Engine>> load_engine(const EngineOptions& options, const char* program,
                                                     int64_t min_context = 0);

// Tokens of a frame's blocks under `rules`: Σ tokens of "<id>: <json>\n",
// each block tokenized on its own as the engine does. Nothing when the frame
// does not partition.
std::optional<int64_t> blocked_tokens(const runtime::Tokenizer& tokenizer, const json_blocker::Rules& rules,
                                      const std::string& json);

}  // namespace kvframe::bench
