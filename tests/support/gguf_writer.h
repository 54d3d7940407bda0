// A small GGUF writer for tests: tests build the model and vocabulary files
// they need (tiny random-weight models, vocabularies with a chosen
// pre-tokenizer, deliberately corrupted files) instead of downloading them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvframe/runtime/gguf.h"

namespace kvframe::test {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);

  // Metadata, written in the order added. Integers are written as the GGUF
  // type the name says.
  void add_u32(const std::string& key, uint32_t v);
  void add_i32(const std::string& key, int32_t v);
  void add_u64(const std::string& key, uint64_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_string_array(const std::string& key, const std::vector<std::string>& v);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& v);
  void add_f32_array(const std::string& key, const std::vector<float>& v);

  // Tensors. dims in ggml order (dims[0] contiguous). `bytes` must hold the
  // data already encoded in `type`.
  void add_tensor(const std::string& name, const std::vector<int64_t>& dims,
                  runtime::GgmlType type, std::vector<uint8_t> bytes);
  // Convenience: fp32 values stored as F32, F16 or BF16 (rounded to nearest).
  void add_tensor_f32(const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<float>& values,
                      runtime::GgmlType type = runtime::GgmlType::kF32);

  std::vector<uint8_t> bytes() const;
  void write(const std::string& path) const;  // throws std::runtime_error on I/O failure

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    runtime::GgmlType type;
    std::vector<uint8_t> bytes;
  };
  uint32_t version_;
  uint64_t alignment_;
  uint64_t n_kv_ = 0;
  std::vector<uint8_t> kv_;  // encoded metadata entries
  std::vector<Tensor> tensors_;
};

// fp32 -> fp16 / bf16 bits, round to nearest even (for writing test tensors).
uint16_t fp32_to_fp16(float f);
uint16_t fp32_to_bf16(float f);

}  // namespace kvframe::test
