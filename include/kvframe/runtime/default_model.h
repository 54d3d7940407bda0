// Where kvframe finds its default model, SmolLM2-135M-Instruct (Q4_1 GGUF),
// which scripts/fetch-model.sh downloads, and the block-tuned LoRA adapter it
// ships for it (models/, made by kvframe-finetune; models/README.md).
#pragma once

#include <string>

namespace kvframe::runtime {

inline constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";

// $KVFRAME_MODEL if set; else $KVFRAME_MODELS/<kDefaultModelFile>; else
// ~/.cache/kvframe/models/<kDefaultModelFile>. The file may not exist.
std::string default_model_path();

inline constexpr const char* kDefaultLoraFile = "SmolLM2-135M-Instruct.block-lora.gguf";

// $KVFRAME_LORA if set; else the adapter in kvframe's models/ folder. The
// file may not exist.
std::string default_lora_path();

// What a program's --lora means for a model: "none" is no adapter; "auto"
// (every CLI's default) is default_lora_path() when the model is the default
// model (by file name) and the adapter is there, else none; anything else is
// that file. Returns the adapter path, "" for none.
std::string resolve_lora(const std::string& option, const std::string& model_path);

}  // namespace kvframe::runtime
