// Writes the seed inputs of fuzz_model (tests/fuzz/model_corpus/): a tiny
// model of each architecture kvframe runs (llama, qwen2, qwen3, gemma3 with
// its windows, phi3 with its fused tensors, partial rotary and LongRoPE),
// damaged Gemma 3 files: cut short, an architecture it does not run, a norm
// missing (its name changed), the window pattern's key misspelt (the default
// pattern then applies), bytes flipped; and a phi3 file whose fused Q|K|V
// is missing.
// Regenerate: build/tests/fuzz/make_model_corpus tests/fuzz/model_corpus
#include <algorithm>
#include <string>
#include <vector>

#include "corpus_files.h"
#include "tiny_model.h"

namespace {

using kvframe::test::SeedFile;
using kvframe::test::TinyModelSpec;

// `bytes` with the first occurrence of `from` replaced by `to` (same length).
std::vector<uint8_t> renamed(std::vector<uint8_t> bytes, const std::string& from, const std::string& to) {
  auto at = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  if (at != bytes.end()) std::copy(to.begin(), to.end(), at);
  return bytes;
}

std::vector<SeedFile> model_seeds() {
  std::vector<SeedFile> files;
  std::vector<uint8_t> gemma;
  for (const char* arch : {"llama", "qwen2", "qwen3", "gemma3"}) {
    TinyModelSpec spec;
    spec.arch = arch;
    spec.n_layer = 2, spec.n_embd = 32, spec.n_head = 2, spec.n_head_kv = 1, spec.n_ff = 64;
    spec.qkv_bias = spec.arch == "qwen2";
    spec.sliding_window = spec.arch == "gemma3" ? 3 : 0;
    const std::vector<uint8_t> bytes = kvframe::test::tiny_model_bytes(spec);
    if (spec.arch == "gemma3") gemma = bytes;
    files.emplace_back("valid_" + spec.arch + ".gguf", bytes);
  }
  TinyModelSpec phi3 = kvframe::test::phi3_shape();
  phi3.n_layer = 2, phi3.n_embd = 32, phi3.n_head = 2, phi3.n_head_kv = 1, phi3.n_ff = 64;
  const std::vector<uint8_t> phi = kvframe::test::tiny_model_bytes(phi3);
  files.emplace_back("valid_phi3.gguf", phi);
  files.emplace_back("phi3_missing_qkv.gguf", renamed(phi, "blk.1.attn_qkv", "blk.1.attn_qkz"));
  files.emplace_back("gemma3_truncated.gguf", std::vector<uint8_t>(gemma.begin(), gemma.begin() + gemma.size() / 2));
  files.emplace_back("gemma3_unknown_arch.gguf", renamed(gemma, "gemma3", "gemmaZ"));
  files.emplace_back("gemma3_missing_q_norm.gguf", renamed(gemma, "blk.1.attn_q_norm", "blk.1.attn_q_nrom"));
  files.emplace_back("gemma3_pattern_renamed.gguf",
                     renamed(gemma, "gemma3.attention.sliding_window_pattern", "gemma3.attention.sliding_window_patterx"));
  files.emplace_back("gemma3_flipped.gguf", kvframe::test::with_bytes_flipped(gemma, 64, 9));
  return files;
}

}  // namespace

int main(int argc, char** argv) { return kvframe::test::write_corpus(argc, argv, model_seeds); }
