#include "frame_source.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "read_input.h"

namespace kvframe::tools {

using json_blocker::Error;
using json_blocker::Result;

Result<FrameSource> FrameSource::open(const std::string& path) {
  FrameSource source;
  source.name_ = input_name(path);
  std::error_code error;
  if (path != "-" && std::filesystem::is_directory(path, error)) {
    source.folder_ = true;
    for (std::filesystem::directory_iterator it(path, error), end; !error && it != end; it.increment(error)) {
      if (it->path().extension() == ".json" && it->is_regular_file(error)) {
        source.files_.push_back(it->path().string());
      }
    }
    if (error) return Error{ErrorCode::kIo, 0, "cannot list " + path + ": " + error.message()};
    std::sort(source.files_.begin(), source.files_.end());
    return source;
  }
  auto text = read_input(path);
  if (!text) return text.error();
  source.lines_ = std::move(text).value();
  return source;
}

Result<bool> FrameSource::next(std::string& frame, std::string& where) {
  if (folder_) {
    if (next_file_ >= files_.size()) return false;
    where = files_[next_file_++];
    auto text = read_input(where);
    if (!text) return text.error();
    frame = std::move(text).value();
    return true;
  }
  while (offset_ < lines_.size()) {
    std::size_t end = lines_.find('\n', offset_);
    if (end == std::string::npos) end = lines_.size();
    std::size_t stop = end;
    if (stop > offset_ && lines_[stop - 1] == '\r') --stop;
    const std::size_t begin = offset_;
    offset_ = end + 1;
    ++line_;
    if (lines_.find_first_not_of(" \t", begin) >= stop) continue;  // blank line
    frame.assign(lines_, begin, stop - begin);
    where = name_ + ":" + std::to_string(line_);
    return true;
  }
  return false;
}

}  // namespace kvframe::tools
