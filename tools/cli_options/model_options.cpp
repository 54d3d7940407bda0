#include "kvframe/cli_options/model_options.h"

#include <filesystem>
#include <optional>

namespace kvframe::cli {

namespace {

std::string with_note(std::string help, const std::string& note) {
  return note.empty() ? help : help + "; " + note;
}

}  // namespace

void add_model_options(CLI::App& app, ModelOptions& o, const ModelOptionsSpec& which) {
  if (which.model) {
    app.add_option("--model", o.model,
                   with_note("GGUF model file, or a name scripts/fetch-model.sh fetches (smollm2-135m, gemma3-270m)",
                             which.model_note))
        ->capture_default_str()
        ->transform(CLI::Validator(
            [](std::string& value) -> std::string {
              const std::optional<std::string> named = runtime::named_model_path(value);
              if (!named) return {};  // a path
              if (!std::filesystem::exists(*named)) {
                return "model '" + value + "' is not in the model cache (" + *named +
                       "): run scripts/fetch-model.sh " + value;
              }
              value = *named;
              return {};
            },
            "", "model name"));
  }
  if (which.device) app.add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  if (which.dtype) {
    auto* dtype = app.add_option("--dtype", o.dtype,
                                 "fp32, bf16 or fp16 (fp16: cuda only; default: bf16 on cuda and on cpus with "
                                 "AVX-512-BF16 or AMX, else fp32)");
    if (which.device) {
      dtype->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
    } else {
      dtype->check(CLI::IsMember({"fp32", "bf16"}));  // the CPU's
    }
  }
  if (which.threads) {
    app.add_option("--threads", o.threads, "CPU threads (default 0: the cores other processes leave free)")
        ->check(CLI::NonNegativeNumber);
  }
  if (which.lora) {
    app.add_option("--lora", o.lora,
                   with_note("a file, none, or auto (with the default model: the game's shipped adapter, else "
                             "kvframe's block-tuned one)",
                             which.lora_note))
        ->capture_default_str();
  }
  if (which.context) {
    app.add_option("--model-context", o.context,
                   "most tokens one sequence holds, as llama.cpp's context size: past its original context "
                   "a phi3 LongRoPE file (Phi-4-mini: 4096) rotates with its long factors (default 0: at most "
                   "the original context)")
        ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  }
}

std::string lora_file(const ModelOptions& o, std::string_view game) {
  return runtime::resolve_lora(o.lora, o.model, game);
}

}  // namespace kvframe::cli
