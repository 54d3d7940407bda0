// Writes the seed inputs of fuzz_gguf (tests/fuzz/gguf_corpus/): tiny valid
// GGUF files made with GgufWriter, and truncated and corrupted variants.
// Regenerate: build-gguf/tests/fuzz/make_gguf_corpus tests/fuzz/gguf_corpus
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "corpus_files.h"
#include "gguf_samples.h"
#include "gguf_writer.h"

namespace {

using kvframe::runtime::ggml_type_size;
using kvframe::runtime::GgmlType;
using kvframe::test::every_type_sample;
using kvframe::test::GgufWriter;
using Bytes = std::vector<uint8_t>;

// Deterministic block bytes whose fp16 scale fields (`scale_offsets`) hold
// small finite values, so dequantized seeds are ordinary numbers.
Bytes blocks(GgmlType type, int64_t n_blocks, std::initializer_list<int> scale_offsets) {
  const auto block_bytes = static_cast<std::size_t>(ggml_type_size(type).block_bytes);
  Bytes out(block_bytes * static_cast<std::size_t>(n_blocks));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 37 + 11);
  for (std::size_t b = 0; b < out.size(); b += block_bytes) {
    for (int at : scale_offsets) {
      out[b + static_cast<std::size_t>(at)] = 0x66;  // fp16 0x1E66: about 0.0062
      out[b + static_cast<std::size_t>(at) + 1] = 0x1E;
    }
  }
  return out;
}

GgufWriter tiny_model(uint32_t version = 3, uint64_t alignment = 32) {
  GgufWriter w(version, alignment);
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 1);
  w.add_f32("llama.rope.freq_base", 10000.0f);
  w.add_string("tokenizer.ggml.model", "gpt2");
  w.add_string_array("tokenizer.ggml.tokens", {"<s>", "</s>", "a", "b", "ab"});
  w.add_i32_array("tokenizer.ggml.token_type", {3, 3, 1, 1, 1});
  w.add_string_array("tokenizer.ggml.merges", {"a b"});
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_tensor("token_embd.weight", {32, 2}, GgmlType::kQ8_0, blocks(GgmlType::kQ8_0, 2, {0}));
  w.add_tensor_f32("blk.0.attn_norm.weight", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  w.add_tensor("blk.0.attn_q.weight", {32, 1}, GgmlType::kQ4_1, blocks(GgmlType::kQ4_1, 1, {0, 2}));
  w.add_tensor("blk.0.attn_k.weight", {32}, GgmlType::kQ4_0, blocks(GgmlType::kQ4_0, 1, {0}));
  w.add_tensor("blk.0.attn_v.weight", {32}, GgmlType::kQ5_0, blocks(GgmlType::kQ5_0, 1, {0}));
  w.add_tensor("blk.0.attn_output.weight", {32}, GgmlType::kQ5_1,
               blocks(GgmlType::kQ5_1, 1, {0, 2}));
  w.add_tensor("blk.0.ffn_up.weight", {256}, GgmlType::kQ4_K, blocks(GgmlType::kQ4_K, 1, {0, 2}));
  w.add_tensor("blk.0.ffn_gate.weight", {256}, GgmlType::kQ5_K, blocks(GgmlType::kQ5_K, 1, {0, 2}));
  w.add_tensor("blk.0.ffn_down.weight", {256}, GgmlType::kQ6_K, blocks(GgmlType::kQ6_K, 1, {208}));
  w.add_tensor("output.weight", {256}, GgmlType::kQ2_K, blocks(GgmlType::kQ2_K, 1, {80, 82}));
  w.add_tensor("blk.0.attn_qkv.weight", {256}, GgmlType::kQ3_K,
               blocks(GgmlType::kQ3_K, 1, {108}));
  w.add_tensor_f32("output_norm.weight", {4}, {1, -1, 0.5f, 2}, GgmlType::kF16);
  w.add_tensor_f32("rope_freqs.weight", {4}, {1, 2, 3, 4}, GgmlType::kBF16);
  return w;
}

void patch_u64(Bytes& bytes, std::size_t at, uint64_t v) { std::memcpy(bytes.data() + at, &v, 8); }

std::vector<kvframe::test::SeedFile> gguf_seeds() {
  std::vector<kvframe::test::SeedFile> seeds;
  const Bytes model = tiny_model().bytes();
  seeds.emplace_back("valid_tiny_model", model);
  seeds.emplace_back("valid_tiny_model_v2_align64", tiny_model(2, 64).bytes());
  seeds.emplace_back("valid_tiny_model_align1", tiny_model(3, 1).bytes());
  seeds.emplace_back("valid_every_metadata_type", every_type_sample(2).bytes());
  {
    GgufWriter w;
    w.add_tensor("q8_1", {32}, GgmlType::kQ8_1, Bytes(36, 0x10));
    w.add_tensor("q8_k", {256}, GgmlType::kQ8_K, Bytes(292, 0x20));
    seeds.emplace_back("valid_unsupported_types", w.bytes());
  }
  for (std::size_t size : {std::size_t{10}, std::size_t{100}, model.size() / 2, model.size() - 1}) {
    const auto end = model.begin() + static_cast<std::ptrdiff_t>(size);
    seeds.emplace_back("truncated_at_" + std::to_string(size), Bytes(model.begin(), end));
  }
  {
    Bytes bad = model;
    bad[0] = 'X';
    seeds.emplace_back("corrupt_magic", bad);
    seeds.emplace_back("corrupt_version_1", GgufWriter(1).bytes());
    bad = model;
    patch_u64(bad, 16, uint64_t{1} << 60);
    seeds.emplace_back("corrupt_metadata_count", bad);
  }
  {
    GgufWriter w;
    w.add_raw("nested", 9,
              {9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    seeds.emplace_back("corrupt_nested_array", w.bytes());
  }
  {
    GgufWriter w;
    w.add_tensor_f32("a", {16}, std::vector<float>(16, 1.0f));
    w.add_tensor_f32("b", {16}, std::vector<float>(16, 2.0f));
    w.override_last_offset(32);
    seeds.emplace_back("corrupt_overlap", w.bytes());
  }
  {
    GgufWriter w;
    w.add_tensor_f32("a", {4}, {1, 2, 3, 4});
    w.override_last_offset(4);
    seeds.emplace_back("corrupt_misaligned", w.bytes());
  }
  {
    GgufWriter w;
    w.add_tensor("weird", {32}, static_cast<GgmlType>(42), Bytes(32, 0));
    w.add_tensor("five_dims", {1, 1, 1, 1, 1}, GgmlType::kF32, Bytes(4, 0));
    seeds.emplace_back("corrupt_tensor_infos", w.bytes());
  }
  {
    GgufWriter w;
    w.add_raw("flag", 7, {2});
    w.add_tensor_f32("t", {1}, {1.0f});
    w.add_tensor_f32("t", {1}, {2.0f});
    seeds.emplace_back("corrupt_bool_and_duplicate", w.bytes());
  }
  return seeds;
}

}  // namespace

int main(int argc, char** argv) { return kvframe::test::write_corpus(argc, argv, gguf_seeds); }
