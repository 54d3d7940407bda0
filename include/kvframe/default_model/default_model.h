// Where kvframe finds its default model, SmolLM2-135M-Instruct (Q4_1 GGUF),
// which scripts/fetch-model.sh downloads, and the block-tuned LoRA adapter it
// ships for it (models/, made by kvframe-finetune; models/README.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace kvframe::runtime {

inline constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";

// $KVFRAME_MODEL if set; else $KVFRAME_MODELS/<kDefaultModelFile>; else
// ~/.cache/kvframe/models/<kDefaultModelFile>. The file may not exist.
std::string default_model_path();

// The models scripts/fetch-model.sh NAME fetches, by name ("smollm2-135m",
// the default, and "gemma3-270m"): the file's path in the model cache
// ($KVFRAME_MODELS, else ~/.cache/kvframe/models; it may not exist), or
// nullopt for a name it does not know.
std::optional<std::string> named_model_path(std::string_view name);

inline constexpr const char* kDefaultLoraFile = "SmolLM2-135M-Instruct.block-lora.gguf";

// $KVFRAME_LORA if set; else the adapter in kvframe's models/ folder. The
// file may not exist.
std::string default_lora_path();

// The adapters kvframe ships for the default model, by name: each
// models/SmolLM2-135M-Instruct.<name>-lora.gguf there ("block", the
// block-tuned one every game may use; "holdem", ... a game's own). Empty
// for any other model (by file name).
std::map<std::string, std::string> shipped_adapters(const std::string& model_path);

// What a program's --lora means for a model: "none" is no adapter; "auto"
// (every CLI's default) is, with the default model (by file name), the
// shipped adapter of `game` if there is one, else default_lora_path() if it
// is there, else none; anything else is that file. Returns the adapter path,
// "" for none.
std::string resolve_lora(const std::string& option, const std::string& model_path, std::string_view game = {});

}  // namespace kvframe::runtime
