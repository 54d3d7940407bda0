// The model knobs of every kvframe program that loads a model — --model,
// --device, --dtype, --threads, --lora, --model-context — defined once: flag, default, check
// and help text, so kvframe-serve, kvframe-holdem, kvframe-generate,
// kvframe-finetune and the benches cannot drift apart. What a program does
// with them beyond runtime::ModelParams (kvframe-serve's --adapter names,
// --shape's random weights) stays in that program.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>

#include "kvframe/default_model/default_model.h"

namespace kvframe::cli {

struct ModelOptions {
  std::string model = runtime::default_model_path();  // a GGUF file
  std::string device = "cpu";                         // "cpu", "cuda", "cuda:N"
  std::string dtype;                                  // "fp32", "bf16", "fp16"; empty: auto (ModelParams::dtype)
  int threads = 0;                                    // runtime::tune_cpu_process's; 0: the free cores
  std::string lora = "auto";                          // a file, "none" or "auto" (runtime::resolve_lora)
  int64_t context = 0;                                // runtime::ModelParams::context
};

// Which of the flags a program has, and what its --model and --lora mean
// there beyond the shared help text (appended after "; ").
struct ModelOptionsSpec {
  bool model = true;
  bool device = true;  // without --device the model runs on the CPU and --dtype takes fp32 or bf16 only
  bool dtype = true;
  bool threads = true;
  bool lora = true;
  bool context = true;  // false: the program derives ModelParams::context from options of its own
  std::string model_note;
  std::string lora_note;
};

// Adds the flags `which` names to `app`, bound to `options`' fields (whose
// values are the defaults --help shows).
void add_model_options(CLI::App& app, ModelOptions& options, const ModelOptionsSpec& which = {});

// The adapter file --lora means ("" for none): runtime::resolve_lora(lora,
// model, game), where `game` names whose shipped adapter "auto" picks.
std::string lora_file(const ModelOptions& options, std::string_view game = {});

}  // namespace kvframe::cli
