#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kvframe::runtime::gguf_detail {
namespace {

Error io_error(const std::string& path, const std::string& what) {
  return Error{ErrorCode::kIo, "cannot " + what + " '" + path + "': " + std::strerror(errno)};
}

}  // namespace

Result<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path, "open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Error error = io_error(path, "stat");
    ::close(fd);
    return error;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{ErrorCode::kIo, "cannot read '" + path + "': not a regular file"};
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return MappedFile();
  }
  void* addr = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file open
  if (addr == MAP_FAILED) {
    errno = map_errno;
    return io_error(path, "map");
  }
  return MappedFile(addr, size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : addr_(std::exchange(other.addr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  MappedFile taken(std::move(other));  // unmaps what this held when it goes
  std::swap(addr_, taken.addr_);
  std::swap(size_, taken.size_);
  return *this;
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) ::munmap(addr_, static_cast<std::size_t>(size_));
}

}  // namespace kvframe::runtime::gguf_detail
