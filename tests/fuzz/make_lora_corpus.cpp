// Writes the seed inputs of fuzz_lora (tests/fuzz/lora_corpus/): adapters for
// the tiny models the target checks against (F32, F16, BF16; every target, a
// few, one; llama's and phi3's fused ones), and truncated and corrupted
// variants of one.
// Regenerate: build/tests/fuzz/make_lora_corpus tests/fuzz/lora_corpus
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kvframe/runtime/lora.h"
#include "kvframe/runtime/model.h"
#include "corpus_files.h"
#include "tiny_model.h"

namespace {

using namespace kvframe::runtime;

std::vector<kvframe::test::SeedFile> lora_seeds() {
  std::vector<kvframe::test::SeedFile> files;
  // The tiny models fuzz_lora checks adapters against: 'llama', and 'phi3'
  // (fused Q|K|V and gate|up).
  auto config_of = [](kvframe::test::TinyModelSpec spec) {
    spec.n_layer = 2;
    const std::vector<uint8_t> model_bytes = kvframe::test::tiny_model_bytes(spec);
    return read_model_config(GgufFile::parse(model_bytes.data(), model_bytes.size()).value()).value();
  };
  const ModelConfig llama = config_of({}), phi3 = config_of(kvframe::test::phi3_shape());
  struct Seed {
    std::string name;
    std::vector<std::string> targets;
    int64_t rank;
    LoraScope scope;
    GgmlType type;
    const ModelConfig* config;
  };
  const std::vector<Seed> seeds = {
      {"all_f32", {}, 2, LoraScope::kAll, GgmlType::kF32, &llama},
      {"all_f16_query", {}, 2, LoraScope::kQuery, GgmlType::kF16, &llama},
      {"qv_bf16", {"attn_q", "attn_v"}, 1, LoraScope::kAll, GgmlType::kBF16, &llama},
      {"down_f32", {"ffn_down"}, 3, LoraScope::kQuery, GgmlType::kF32, &llama},
      {"phi3_all_f32", {}, 2, LoraScope::kAll, GgmlType::kF32, &phi3},
      {"phi3_qkv_up_f16", {"attn_qkv", "ffn_up"}, 1, LoraScope::kQuery, GgmlType::kF16, &phi3},
  };
  std::vector<uint8_t> first;
  // Seeded, so regenerating writes the same files.
  at::Generator generator = at::detail::createCPUGenerator(11);
  for (const Seed& s : seeds) {
    LoraParams params;
    params.rank = s.rank;
    params.targets = s.targets;
    params.scope = s.scope;
    auto adapter = LoraAdapter::create(*s.config, params, at::kCPU, 5).value();
    for (size_t i = 1; i < adapter->parameters().size(); i += 2) adapter->parameters()[i].normal_(0, 0.01, generator);
    const std::vector<uint8_t> bytes = adapter->bytes(s.type);
    if (first.empty()) first = bytes;
    files.emplace_back(s.name + ".gguf", bytes);
  }
  // Damaged copies of the first: cut short, and with bytes flipped in the
  // metadata and in a tensor's data.
  files.emplace_back("truncated.gguf", std::vector<uint8_t>(first.begin(), first.begin() + first.size() / 3));
  files.emplace_back("flipped.gguf", kvframe::test::with_bytes_flipped(first, 40, 7));
  return files;
}

}  // namespace

int main(int argc, char** argv) { return kvframe::test::write_corpus(argc, argv, lora_seeds); }
