// A GGUF writer: kvframe writes its LoRA adapters and training checkpoints
// with it, and tests build the files they need (tiny random-weight models,
// vocabularies with a chosen pre-tokenizer, deliberately corrupted files).
//
//   GgufWriter w;
//   w.add_string("general.architecture", "llama");
//   w.add_tensor_f32("output_norm.weight", {64}, std::vector<float>(64, 1.0f));
//   w.write(path);   // or GgufFile::parse on w.bytes()
//
// The writer does not validate: it writes whatever it is given (5 dims, a
// Q4_0 row of 16 elements, duplicate names, unknown types), so tests can
// build the broken files the reader must reject. Writers of real files check
// their tensors first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvframe/common/error.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace kvframe::runtime {

// Metadata value type codes as stored in the file (GGUF spec).
enum class GgufValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

class GgufWriter {
 public:
  // An alignment other than 32 is also written as general.alignment (u32),
  // first in the metadata, unless the test adds that key itself.
  explicit GgufWriter(uint32_t version = 3, uint64_t alignment = 32);

  // Metadata, written in the order added. Integers are written as the GGUF
  // type the name says.
  void add_u8(const std::string& key, uint8_t v);
  void add_i8(const std::string& key, int8_t v);
  void add_u16(const std::string& key, uint16_t v);
  void add_i16(const std::string& key, int16_t v);
  void add_u32(const std::string& key, uint32_t v);
  void add_i32(const std::string& key, int32_t v);
  void add_u64(const std::string& key, uint64_t v);
  void add_i64(const std::string& key, int64_t v);
  void add_f32(const std::string& key, float v);
  void add_f64(const std::string& key, double v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_string_array(const std::string& key, const std::vector<std::string>& v);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& v);
  void add_f32_array(const std::string& key, const std::vector<float>& v);
  void add_bool_array(const std::string& key, const std::vector<bool>& v);
  // Arrays of any integer type (each value truncated to `element_type`), or
  // of kF32 / kF64.
  void add_int_array(const std::string& key, GgufValueType element_type,
                     const std::vector<int64_t>& v);
  void add_float_array(const std::string& key, GgufValueType element_type,
                       const std::vector<double>& v);
  // Any value, already encoded (for malformed values: nested arrays, a bool
  // byte of 2, an undefined type code).
  void add_raw(const std::string& key, uint32_t type, const std::vector<uint8_t>& encoded_value);

  // Tensors. dims in ggml order (dims[0] contiguous). `bytes` must hold the
  // data already encoded in `type`.
  void add_tensor(const std::string& name, const std::vector<int64_t>& dims,
                  GgmlType type, std::vector<uint8_t> bytes);
  // Convenience: fp32 values stored as F32, F16 or BF16 (rounded to nearest),
  // or Q8_0, Q4_0, Q4_1 (quantize(); a multiple of 32 values).
  void add_tensor_f32(const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<float>& values,
                      GgmlType type = GgmlType::kF32);
  // Writes `offset` in the info of the last tensor added instead of where its
  // data really goes (misaligned or overlapping tensors); the data is still
  // laid out as if it had not been overridden.
  void override_last_offset(uint64_t offset);

  std::vector<uint8_t> bytes() const;
  // Writes path + ".partial", then renames it to path: a reader never sees
  // half a file. kIo when the file cannot be written.
  Status write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    GgmlType type;
    std::vector<uint8_t> bytes;
    std::optional<uint64_t> offset_override;
  };
  void begin_entry(const std::string& key, GgufValueType type);

  uint32_t version_;
  uint64_t alignment_;
  uint64_t n_kv_ = 0;
  bool has_alignment_key_ = false;
  std::vector<uint8_t> kv_;  // encoded metadata entries
  std::vector<Tensor> tensors_;
};

// fp32 -> fp16 / bf16 bits, round to nearest even.
uint16_t fp32_to_fp16(float f);
uint16_t fp32_to_bf16(float f);

}  // namespace kvframe::runtime
