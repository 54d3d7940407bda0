// ModelOptions as the runtime::ModelParams a program loads its model with:
// kvframe::cli_model, header-only, which links kvframe::cli_options and the
// runtime (kvframe::cli_options itself needs no libtorch: bench_schema takes
// --model for its tokenizer alone).
#pragma once

#include <string_view>

#include "kvframe/cli_options/model_options.h"
#include "kvframe/runtime/model.h"

namespace kvframe::cli {

// --device, --dtype, --model-context and --lora (resolved for `game`, see lora_file); the
// other fields keep ModelParams' defaults. --threads is not a model
// parameter: pass it to runtime::tune_cpu_process.
inline runtime::ModelParams model_params(const ModelOptions& options, std::string_view game = {}) {
  runtime::ModelParams params;
  params.device = options.device;
  params.dtype = options.dtype;
  params.lora = lora_file(options, game);
  params.context = options.context;
  return params;
}

}  // namespace kvframe::cli
