#include "frame_files.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace kvframe::tools {
namespace {

bool write_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(out);
}

}  // namespace

std::string write_frame_files(const std::filesystem::path& dir,
                              const examples::moba::Frame& frame, std::string_view patch_name,
                              std::string_view patch) {
  char stem[32];
  std::snprintf(stem, sizeof stem, "frame_%04llu", static_cast<unsigned long long>(frame.number));
  nlohmann::ordered_json changes = nlohmann::ordered_json::array();
  for (const auto& change : frame.changes) {
    changes.push_back({{"kind", examples::moba::change_kind_name(change.kind)},
                       {"pointer", change.pointer}});
  }
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  const std::string changes_text = changes.dump();
  files.emplace_back(dir / (std::string(stem) + ".json"), frame.json);
  files.emplace_back(dir / (std::string(stem) + ".changes.json"), changes_text);
  if (!patch.empty()) {
    files.emplace_back(dir / (std::string(stem) + "." + std::string(patch_name) + ".json"), patch);
  }
  for (const auto& [path, text] : files) {
    if (!write_file(path, text)) return "cannot write " + path.string();
  }
  return "";
}

}  // namespace kvframe::tools
