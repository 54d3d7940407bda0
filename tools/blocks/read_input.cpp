#include "read_input.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace kvframe::tools {

using json_blocker::Error;

namespace {

Error io_error(const std::string& path, int error_number) {
  return Error{ErrorCode::kIo, 0,
               "cannot read " + input_name(path) + ": " + std::strerror(error_number)};
}

}  // namespace

std::string input_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

json_blocker::Result<std::string> read_input(const std::string& path) {
  // stdio rather than iostreams: it keeps errno, so "Is a directory" or
  // "Permission denied" reach the user instead of a bare "failed".
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> owned(nullptr, std::fclose);
  std::FILE* file = stdin;
  if (path != "-") {
    owned.reset(std::fopen(path.c_str(), "rb"));
    if (!owned) return io_error(path, errno);
    file = owned.get();
  }
  std::string bytes;
  char chunk[1 << 16];
  std::size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.append(chunk, got);
  if (std::ferror(file)) return io_error(path, errno);
  return bytes;
}

}  // namespace kvframe::tools
