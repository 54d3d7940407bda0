#include "corpus_files.h"

#include <cstdio>

namespace kvframe::test {

std::vector<uint8_t> with_bytes_flipped(std::vector<uint8_t> bytes, size_t first, size_t parts) {
  for (size_t i = first; i < bytes.size(); i += bytes.size() / parts) bytes[i] ^= 0x5A;
  return bytes;
}

int write_corpus(int argc, char** argv, const std::function<std::vector<SeedFile>()>& make_seeds) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<SeedFile> seeds = make_seeds();
  for (const auto& [name, bytes] : seeds) {
    const std::string path = dir + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const bool written = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (f != nullptr) std::fclose(f);
    if (!written) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  std::printf("wrote %zu seeds to %s\n", seeds.size(), dir.c_str());
  return 0;
}

}  // namespace kvframe::test
