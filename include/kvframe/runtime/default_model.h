// Where kvframe finds its default model, SmolLM2-135M-Instruct (Q4_1 GGUF),
// which scripts/fetch-model.sh downloads.
#pragma once

#include <string>

namespace kvframe::runtime {

inline constexpr const char* kDefaultModelFile = "SmolLM2-135M-Instruct.Q4_1.gguf";

// $KVFRAME_MODEL if set; else $KVFRAME_MODELS/<kDefaultModelFile>; else
// ~/.cache/kvframe/models/<kDefaultModelFile>. The file may not exist.
std::string default_model_path();

}  // namespace kvframe::runtime
