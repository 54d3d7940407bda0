// What the fuzz corpus writers (tests/fuzz/make_*_corpus) share: their one
// argument, the output folder, and a file per seed in it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kvframe::test {

using SeedFile = std::pair<std::string, std::vector<uint8_t>>;  // file name, bytes

// A damaged copy of `bytes`: every (size / parts)-th byte from `first` on
// XORed with 0x5A, so the header's metadata and the tensor data both break.
std::vector<uint8_t> with_bytes_flipped(std::vector<uint8_t> bytes, size_t first, size_t parts);

// main() of a corpus writer: writes make_seeds()'s files into the folder
// argv[1] names. Returns the exit status: 0 written, 1 a file could not be
// written (named on stderr), 2 usage.
int write_corpus(int argc, char** argv, const std::function<std::vector<SeedFile>()>& make_seeds);

}  // namespace kvframe::test
