#include "kvframe/default_model/default_model.h"

#include <cstdlib>
#include <filesystem>

namespace kvframe::runtime {

namespace {

std::string in_model_cache(const std::string& file) {
  if (const char* dir = std::getenv("KVFRAME_MODELS"); dir && *dir) return std::string(dir) + "/" + file;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/kvframe/models/" + file;
}

}  // namespace

std::string default_model_path() {
  if (const char* model = std::getenv("KVFRAME_MODEL"); model && *model) return model;
  return in_model_cache(kDefaultModelFile);
}

std::optional<std::string> named_model_path(std::string_view name) {
  // As scripts/fetch-model.sh names and saves them.
  if (name == "smollm2-135m") return in_model_cache(kDefaultModelFile);
  if (name == "gemma3-270m") return in_model_cache("gemma-3-270m-q4_k_m.gguf");
  return std::nullopt;
}

std::string default_lora_path() {
  if (const char* lora = std::getenv("KVFRAME_LORA"); lora && *lora) return lora;
  return std::string(KVFRAME_MODELS_DIR) + "/" + kDefaultLoraFile;
}

namespace {

bool is_default_model(const std::string& model_path) {
  return std::filesystem::path(model_path).filename() == kDefaultModelFile;
}

}  // namespace

std::map<std::string, std::string> shipped_adapters(const std::string& model_path) {
  std::map<std::string, std::string> found;
  if (!is_default_model(model_path)) return found;
  const std::string stem = std::filesystem::path(kDefaultLoraFile).string();
  const std::string prefix = stem.substr(0, stem.find('.') + 1);  // "SmolLM2-135M-Instruct."
  const std::string suffix = "-lora.gguf";
  std::error_code failed;
  for (const auto& entry : std::filesystem::directory_iterator(KVFRAME_MODELS_DIR, failed)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > prefix.size() + suffix.size() && file.rfind(prefix, 0) == 0 &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      found[file.substr(prefix.size(), file.size() - prefix.size() - suffix.size())] = entry.path().string();
    }
  }
  return found;
}

std::string resolve_lora(const std::string& option, const std::string& model_path, std::string_view game) {
  if (option == "none" || option.empty()) return "";
  if (option != "auto") return option;
  if (!is_default_model(model_path)) return "";
  if (!game.empty()) {
    const auto shipped = shipped_adapters(model_path);
    if (auto own = shipped.find(std::string(game)); own != shipped.end()) return own->second;
  }
  const std::string shipped = default_lora_path();
  return std::filesystem::exists(shipped) ? shipped : "";
}

}  // namespace kvframe::runtime
