// Fuzz entry point over the GGUF reader: the input is the file's bytes, as is.
// A file that parses must be safe to use in full: every metadata value and
// getter, every tensor's data and a bounded prefix of every dequantizable
// tensor (so the fuzzer spends its time in the parser, not in big tensors).
// A file that does not parse must say why. Violations print and trap.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "fuzz_check.h"
#include "fuzz_entry.h"
#include "kvframe/runtime_gguf/gguf.h"

namespace {

using namespace kvframe::runtime;
using kvframe::ErrorCode;
using kvframe::Result;

constexpr int64_t kMaxDequantElements = 4096;

template <class T>
void check_getter(const Result<T>& result) {
  FUZZ_CHECK(result.ok() || result.error().code == ErrorCode::kWrongKeyType,
             "a getter on a present key failed with something other than kWrongKeyType");
}

void use_metadata(const GgufFile& file) {
  for (const auto& [key, value] : file.metadata()) {
    FUZZ_CHECK(file.find(key) == &value, "find() does not return the key's own value");
    check_getter(file.get_string(key));
    check_getter(file.get_int(key));
    check_getter(file.get_float(key));
    check_getter(file.get_bool(key));
    check_getter(file.get_string_array(key));
    check_getter(file.get_int_array(key));
    check_getter(file.get_float_array(key));
  }
  FUZZ_CHECK(file.alignment() != 0 && (file.alignment() & (file.alignment() - 1)) == 0,
             "alignment is not a power of two");
}

void use_tensor(const GgufFile& file, const GgufTensorInfo& t) {
  FUZZ_CHECK(file.find_tensor(t.name) == &t, "find_tensor() does not return the tensor");
  FUZZ_CHECK(!t.dims.empty() && t.dims.size() <= 4, "dims count outside 1..4");
  FUZZ_CHECK(t.offset % file.alignment() == 0, "misaligned tensor accepted");
  const GgmlTypeSize size = ggml_type_size(t.type);
  FUZZ_CHECK(size.block_size > 0, "a tensor of a type that cannot be sized was accepted");
  const int64_t n = t.n_elements();
  FUZZ_CHECK(n > 0 && t.dims[0] % size.block_size == 0, "rows are not whole blocks");
  FUZZ_CHECK(t.nbytes == static_cast<uint64_t>(n / size.block_size * size.block_bytes),
             "nbytes disagrees with dims and type");
  // The sanitizers flag these if the data is not inside the parsed bytes.
  volatile uint8_t edge = static_cast<uint8_t>(t.data[0] ^ t.data[t.nbytes - 1]);
  (void)edge;

  std::vector<float> out;
  if (!dequantize_supported(t.type)) {
    FUZZ_CHECK(!dequantize_tensor(t, out.data()).ok(), "unsupported type dequantized");
    return;
  }
  if (n <= kMaxDequantElements) {
    out.resize(static_cast<std::size_t>(n));
    FUZZ_CHECK(dequantize_tensor(t, out.data()).ok(), "supported type refused");
    return;
  }
  const int64_t prefix =
      std::max(size.block_size, kMaxDequantElements / size.block_size * size.block_size);
  out.resize(static_cast<std::size_t>(prefix));
  dequantize(t.type, t.data, out.data(), prefix);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Result<GgufFile> file = GgufFile::parse(data, size);
  if (!file.ok()) {
    FUZZ_CHECK(!file.error().message.empty(), "an error without a message");
    FUZZ_CHECK(file.error().message.rfind("<memory>: ", 0) == 0,
               "an error message that does not name the file");
    return 0;
  }
  use_metadata(*file);
  for (const GgufTensorInfo& t : file->tensors()) use_tensor(*file, t);
  return 0;
}
