#include "kvframe/server/adapter_set.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "kvframe/default_model/default_model.h"

namespace kvframe::server {
namespace {

namespace rt = runtime;

bool valid_name(const std::string& name) {
  if (name.empty() || name == "none" || name == "default") return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '-' || c == '.';
  });
}

// The same file however it was written (relative, through links).
std::string canonical(const std::string& path) {
  std::error_code failed;
  const std::filesystem::path resolved = std::filesystem::weakly_canonical(path, failed);
  return failed ? path : resolved.string();
}

}  // namespace

BackendResult<std::map<std::string, std::string>> adapter_files(const std::vector<std::string>& specs,
                                                                const std::string& model_path) {
  std::map<std::string, std::string> files = rt::shipped_adapters(model_path);
  for (const std::string& spec : specs) {
    const size_t equals = spec.find('=');
    const std::string name = spec.substr(0, equals);
    if (equals == std::string::npos || equals + 1 == spec.size() || !valid_name(name)) {
      return BackendError{fb::ErrorCode::BadRequest,
                          "--adapter " + spec + ": write NAME=FILE, NAME of letters, digits, '_', '-' or '.' and "
                          "neither none nor default"};
    }
    files[name] = spec.substr(equals + 1);
  }
  return files;
}

BackendResult<NamedAdapters> load_adapters(rt::Engine& engine, const std::map<std::string, std::string>& files,
                                           const std::string& default_file) {
  NamedAdapters adapters;
  std::shared_ptr<rt::LoraAdapter> fallback;
  auto load = [&](const std::string& file) -> BackendResult<std::shared_ptr<rt::LoraAdapter>> {
    auto loaded = rt::LoraAdapter::load(file, engine.model().config(), engine.model().device());
    if (!loaded) return BackendError{fb::ErrorCode::Engine, file + ": " + loaded.error().to_string()};
    return std::move(loaded).value();
  };
  for (const auto& [name, file] : files) {
    auto loaded = load(file);
    if (!loaded) return loaded.error();
    adapters[name] = *loaded;
    if (!default_file.empty() && canonical(file) == canonical(default_file)) fallback = *loaded;
  }
  if (!default_file.empty() && !fallback) {
    auto loaded = load(default_file);
    if (!loaded) return loaded.error();
    fallback = *loaded;
  }
  if (auto set = engine.set_adapter(fallback); !set.ok()) {
    return BackendError{fb::ErrorCode::Engine, default_file + ": " + set.error().to_string()};
  }
  return adapters;
}

std::string adapter_names(const NamedAdapters& adapters) {
  std::string names;
  for (const auto& named : adapters) names += (names.empty() ? "" : ", ") + named.first;
  return names.empty() ? "none" : names;
}

}  // namespace kvframe::server
