// write_tiny_model PATH [llama|qwen2|phi3] [N_CTX]: writes a tiny random-weight model as a
// GGUF file, for tests that run the CLIs as processes.
#include <cstdio>
#include <fstream>
#include <string>

#include "tiny_model.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: write_tiny_model PATH [llama|qwen2|phi3] [N_CTX]\n");
    return 1;
  }
  kvframe::test::TinyModelSpec spec;
  if (argc > 2) spec.arch = argv[2];
  if (spec.arch == "phi3") spec = kvframe::test::phi3_shape();  // with its partial rotary and LongRoPE factors
  if (argc > 3) spec.n_ctx = std::stoll(argv[3]);  // e.g. 4096 for game states of a few KiB (a token per byte)
  const std::vector<uint8_t> bytes = kvframe::test::tiny_model_bytes(spec);
  std::ofstream out(argv[1], std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return out ? 0 : 2;
}
