// LoRA adapters: low-rank updates W + (alpha / rank) · B A of a model's
// projections, trained by kvframe-finetune (block fine-tuning) and loaded
// with a model (ModelParams::lora, every CLI's --lora).
//
// Files are GGUF in the layout llama.cpp reads (general.type = "adapter",
// adapter.type = "lora", adapter.lora.alpha; tensors blk.N.<target>.weight.lora_a
// [rank, in] and .lora_b [out, rank] in torch order), so an adapter trained
// here also runs in llama.cpp. kvframe adds kvframe.lora.scope (see LoraScope;
// llama.cpp ignores it and applies the adapter to every token) and
// kvframe.lora.base (the base model's general.name).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

struct ModelConfig;

// Which tokens an adapter changes.
//   kAll    every token: the prompt's context (prefix, blocks) and its query
//           (final block, answer) alike, as in the seeds' block fine-tuning.
//           Block KV computed with it differs from the base model's.
//   kQuery  the query only: context KV stays the base model's (cached block
//           KV is shared with sessions that run no adapter), and training
//           needs gradients through the final block and answer alone.
enum class LoraScope { kAll, kQuery };
const char* lora_scope_name(LoraScope scope);  // "all", "query"
Result<LoraScope> parse_lora_scope(std::string_view name);

// The projections an adapter of this model may change, by the names of
// their GGUF tensors: attn_q attn_k attn_v attn_output ffn_gate ffn_up
// ffn_down; for a model whose file fuses them (phi3) attn_qkv (Q|K|V)
// attn_output ffn_up (gate|up) ffn_down, one low-rank pair each, as
// llama.cpp adapts those tensors.
std::vector<std::string> lora_target_names(const ModelConfig& config);

struct LoraParams {
  int64_t rank = 8;
  double alpha = 16;  // the update is scaled by alpha / rank (a file without alpha: by 1, as llama.cpp)
  // Empty: every projection of the model (lora_target_names).
  std::vector<std::string> targets;
  LoraScope scope = LoraScope::kQuery;
};

class LoraAdapter {
 public:
  // A fresh adapter for a model of this shape: A uniform in ±1/sqrt(in), B
  // zero, so it starts as the base model. Masters are fp32 on `device`;
  // params().targets names them all. kInvalidArgument for a rank < 1,
  // alpha <= 0, or a target that is not one of the model's.
  static Result<std::shared_ptr<LoraAdapter>> create(const ModelConfig& config, const LoraParams& params,
                                                     at::Device device = at::kCPU, uint64_t seed = 0);
  // Reads an adapter file for a model of this shape. Besides the GGUF
  // reader's errors: kInvalidArgument when the file is not a LoRA adapter or
  // is for another architecture, or names an unknown tensor or half a pair;
  // kShapeMismatch for a tensor that does not fit this model;
  // kUnsupportedType for tensors other than F32, F16, BF16 or Q8_0; kCorrupt
  // for non-finite values.
  static Result<std::shared_ptr<LoraAdapter>> load(const std::string& path, const ModelConfig& config,
                                                   at::Device device = at::kCPU);
  static Result<std::shared_ptr<LoraAdapter>> parse(const GgufFile& file, const ModelConfig& config,
                                                    at::Device device = at::kCPU);

  ~LoraAdapter();
  LoraAdapter(const LoraAdapter&) = delete;
  LoraAdapter& operator=(const LoraAdapter&) = delete;

  // Writes the adapter (F32, F16 or BF16 tensors). kIo when the file cannot
  // be written; kInvalidArgument for another type.
  Status save(const std::string& path, GgmlType type = GgmlType::kF16) const;
  // The adapter file's bytes (what save() writes; F32 for a type it refuses).
  std::vector<uint8_t> bytes(GgmlType type = GgmlType::kF16) const;

  const LoraParams& params() const;
  const std::string& base_name() const;  // the base model's general.name, "" if unknown
  void set_base_name(std::string name);
  // The fp32 masters, A then B of each adapted projection, layer by layer:
  // what an optimizer trains. Their names are the file's tensor names.
  const std::vector<at::Tensor>& parameters() const;
  const std::vector<std::string>& parameter_names() const;
  int64_t n_parameters() const;
  // A hash of the scope, scaling and every tensor's values: what block KV
  // computed with this adapter depends on.
  uint64_t fingerprint() const;

  struct Impl;

 private:
  friend struct LoraAccess;  // the forward pass reads the fused tensors
  explicit LoraAdapter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
