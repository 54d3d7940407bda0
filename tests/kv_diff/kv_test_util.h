// Shared by the kv_diff tests: a tiny random-weight model, random blocks, and
// the reference placement (runtime::Rope layer by layer, as the model's own
// attention rotates keys).
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "kvframe/kv_diff/block_store.h"
#include "kvframe/runtime/model.h"

namespace kvframe::kv_diff::testing {

// 2 layers, 2 KV heads of 16: small enough to check every entry every frame.
inline runtime::ModelConfig tiny_config() {
  runtime::ModelConfig c;
  c.arch = "llama";
  c.n_layer = 2;
  c.n_embd = 64;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 16;
  c.n_ff = 64;
  c.n_vocab = 32;
  c.rope.head_dim = 16;
  c.rope.freq_base = 10000.0;
  return c;
}

inline std::unique_ptr<runtime::Model> tiny_model(const std::string& device = "cpu") {
  runtime::ModelParams params;
  params.device = device;
  if (device == "cpu") params.dtype = "fp32";  // exact comparisons; CUDA keeps its bf16 default
  auto model = runtime::Model::with_random_weights(tiny_config(), params, 1);
  EXPECT_TRUE(model.ok()) << model.error().to_string();
  return std::move(model).value();
}

inline runtime::BlockKv random_block(int64_t n, const runtime::ModelConfig& c = tiny_config()) {
  return {at::randn({c.n_layer, c.n_head_kv, n, c.head_dim}), at::randn({c.n_layer, c.n_head_kv, n, c.head_dim})};
}

// A stored block outside any store; `serial` makes its key unique.
inline BlockRef stored(runtime::BlockKv kv, uint64_t serial) {
  const int64_t bytes = static_cast<int64_t>(kv.k.nbytes() + kv.v.nbytes());
  return std::make_shared<const StoredBlock>(StoredBlock{{serial, ~serial}, std::move(kv), bytes});
}

// Base keys [L, KH, n, d] placed at positions position.., fp32.
inline at::Tensor reference_k(const runtime::Rope& rope, const at::Tensor& base, int64_t position) {
  const at::Tensor positions = at::arange(position, position + base.size(2), at::kLong);
  const runtime::Rope::Table table = rope.table(positions);
  std::vector<at::Tensor> layers;
  for (int64_t l = 0; l < base.size(0); ++l) {
    layers.push_back(runtime::Rope::apply(base[l].to(at::kCPU, at::kFloat).transpose(0, 1), table).transpose(0, 1));
  }
  return at::stack(layers);
}

inline float max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kCPU, at::kFloat) - b.to(at::kCPU, at::kFloat)).abs().max().item<float>();
}

}  // namespace kvframe::kv_diff::testing
