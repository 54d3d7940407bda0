// GGUF reader: the file format llama.cpp and most game studios' model
// pipelines ship weights in (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md).
//
//   header     magic "GGUF", version (2 or 3), tensor count, metadata count
//   metadata   key -> typed value (integers, floats, bools, strings, arrays)
//   tensors    name, dims (ggml order: dims[0] is the contiguous one), type, offset
//   data       aligned to general.alignment (default 32)
//
// The file is memory-mapped; parsing validates every count, length and offset
// against the file size before it is used, so a truncated or corrupted file is
// a typed Error naming the key or tensor, never an out-of-bounds read.
// This part knows nothing of torch: it is fuzzed on its own (tests/fuzz).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kvframe/common/error.h"

namespace kvframe::runtime {

// ggml tensor types (values as stored in the file).
enum class GgmlType : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
  kQ8_1 = 9, kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14,
  kQ8_K = 15, kBF16 = 30,
};

// "Q4_K", "F32", ... ; "type 42" for values we do not know.
std::string ggml_type_name(GgmlType type);

// Elements per quantization block and bytes per block for every enumerated
// type (so a file holding e.g. Q8_K tensors still opens); {0, 0} for values
// outside the enum. Whether a type can be dequantized: dequantize_supported().
struct GgmlTypeSize {
  int64_t block_size;
  int64_t block_bytes;
};
GgmlTypeSize ggml_type_size(GgmlType type);

// True for F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K.
bool dequantize_supported(GgmlType type);

// Dequantizes n elements of `type` at src into dst (fp32). n must be a multiple
// of the type's block size and src must hold ggml_type_size(type).block_bytes
// * n / block_size bytes; both are checked by the caller (GgufFile validates
// them for every tensor). Matches ggml's reference dequantize_row_* exactly.
// An unsupported type fills dst with NaN.
void dequantize(GgmlType type, const void* src, float* dst, int64_t n);

// True for Q8_0, Q4_0 and Q4_1: the types quantize() writes.
bool quantize_supported(GgmlType type);
// Rounds n fp32 values (a multiple of 32) to `type` as ggml's reference
// quantize_row_*_ref does; dst holds ggml_type_size(type).block_bytes * n / 32
// bytes. Writes nothing for a type !quantize_supported().
void quantize(GgmlType type, const float* src, uint8_t* dst, int64_t n);

// One metadata value. Scalars: u64 stays uint64_t, every other integer type
// widens to int64_t, f32/f64 to double. Arrays keep their element kind:
// integers widen to int64 (a u64 element above INT64_MAX makes the file
// kCorrupt), floats to double. Arrays of arrays are rejected as kCorrupt:
// llama.cpp never writes them and no model key uses them.
using GgufArray = std::variant<std::vector<int64_t>, std::vector<double>,
                               std::vector<bool>, std::vector<std::string>>;
using GgufValue = std::variant<int64_t, uint64_t, double, bool, std::string, GgufArray>;

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> dims;  // ggml order: dims[0] is contiguous (a row)
  GgmlType type;
  uint64_t offset;            // from the start of the data section
  uint64_t nbytes;            // validated: the data lies inside the file
  const uint8_t* data;        // into the mapping; valid while the GgufFile lives

  int64_t n_elements() const;
};

// Dequantizes a whole tensor into dst (tensor.n_elements() floats).
// kUnsupportedType, naming the tensor and its type, when
// !dequantize_supported(tensor.type).
Status dequantize_tensor(const GgufTensorInfo& tensor, float* dst);

class GgufFile {
 public:
  // Maps and parses a file. Errors: kIo, kBadMagic, kUnsupportedVersion,
  // kTruncated, kCorrupt, kUnsupportedType (a tensor whose type we cannot even
  // size: dequantize_supported() is checked later, by whoever loads it).
  static Result<GgufFile> open(const std::string& path);
  // Parses bytes already in memory (tests, fuzzing). Keeps a copy.
  static Result<GgufFile> parse(const uint8_t* data, std::size_t size);

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  uint32_t version() const;
  uint64_t alignment() const;
  const std::string& path() const;  // "<memory>" for parse()
  // Keeps the file's bytes (every tensor's data) alive past the GgufFile:
  // a model that multiplies the file's own blocks holds it.
  std::shared_ptr<const void> bytes_owner() const;

  // Metadata in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const;
  const GgufValue* find(std::string_view key) const;

  // Typed getters: kMissingKey when absent, kWrongKeyType when the key holds
  // another type. Any integer type is accepted by get_int (range-checked);
  // get_float accepts integers too.
  Result<std::string> get_string(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key) const;
  Result<double> get_float(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::vector<std::string>> get_string_array(std::string_view key) const;
  Result<std::vector<int64_t>> get_int_array(std::string_view key) const;
  Result<std::vector<double>> get_float_array(std::string_view key) const;

  // In file order.
  const std::vector<GgufTensorInfo>& tensors() const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;

 private:
  struct Impl;
  explicit GgufFile(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kvframe::runtime
