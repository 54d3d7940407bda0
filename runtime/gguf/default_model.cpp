#include "kvframe/runtime/default_model.h"

#include <cstdlib>
#include <filesystem>

namespace kvframe::runtime {

std::string default_model_path() {
  if (const char* model = std::getenv("KVFRAME_MODEL"); model && *model) return model;
  if (const char* dir = std::getenv("KVFRAME_MODELS"); dir && *dir) return std::string(dir) + "/" + kDefaultModelFile;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/kvframe/models/" + kDefaultModelFile;
}

std::string default_lora_path() {
  if (const char* lora = std::getenv("KVFRAME_LORA"); lora && *lora) return lora;
  return std::string(KVFRAME_MODELS_DIR) + "/" + kDefaultLoraFile;
}

std::string resolve_lora(const std::string& option, const std::string& model_path) {
  if (option == "none" || option.empty()) return "";
  if (option != "auto") return option;
  const bool default_model = std::filesystem::path(model_path).filename() == kDefaultModelFile;
  const std::string shipped = default_lora_path();
  return default_model && std::filesystem::exists(shipped) ? shipped : "";
}

}  // namespace kvframe::runtime
