#include "kvframe/runtime/default_model.h"

#include <cstdlib>

namespace kvframe::runtime {

std::string default_model_path() {
  if (const char* model = std::getenv("KVFRAME_MODEL"); model && *model) return model;
  if (const char* dir = std::getenv("KVFRAME_MODELS"); dir && *dir) return std::string(dir) + "/" + kDefaultModelFile;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.cache/kvframe/models/" + kDefaultModelFile;
}

}  // namespace kvframe::runtime
