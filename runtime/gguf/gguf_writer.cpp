#include "kvframe/runtime_gguf/gguf_writer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <type_traits>

namespace kvframe::runtime {
namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr const char* kAlignmentKey = "general.alignment";

template <class T>
void put(std::vector<uint8_t>& out, T v) {
  static_assert(std::is_trivially_copyable_v<T>);
  uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));  // GGUF is little-endian, as are our hosts
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

void put_string(std::vector<uint8_t>& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_integer(std::vector<uint8_t>& out, GgufValueType type, int64_t v) {
  switch (type) {
    case GgufValueType::kU8: put(out, static_cast<uint8_t>(v)); return;
    case GgufValueType::kI8: put(out, static_cast<int8_t>(v)); return;
    case GgufValueType::kU16: put(out, static_cast<uint16_t>(v)); return;
    case GgufValueType::kI16: put(out, static_cast<int16_t>(v)); return;
    case GgufValueType::kU32: put(out, static_cast<uint32_t>(v)); return;
    case GgufValueType::kI32: put(out, static_cast<int32_t>(v)); return;
    case GgufValueType::kU64: put(out, static_cast<uint64_t>(v)); return;
    case GgufValueType::kI64: put(out, v); return;
    default: throw std::invalid_argument("GgufWriter: not an integer type");
  }
}

uint64_t align_up(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

uint32_t float_bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

}  // namespace

GgufWriter::GgufWriter(uint32_t version, uint64_t alignment)
    : version_(version), alignment_(alignment) {}

void GgufWriter::begin_entry(const std::string& key, GgufValueType type) {
  put_string(kv_, key);
  put(kv_, static_cast<uint32_t>(type));
  ++n_kv_;
  if (key == kAlignmentKey) has_alignment_key_ = true;
}

void GgufWriter::add_u8(const std::string& key, uint8_t v) {
  begin_entry(key, GgufValueType::kU8);
  put(kv_, v);
}
void GgufWriter::add_i8(const std::string& key, int8_t v) {
  begin_entry(key, GgufValueType::kI8);
  put(kv_, v);
}
void GgufWriter::add_u16(const std::string& key, uint16_t v) {
  begin_entry(key, GgufValueType::kU16);
  put(kv_, v);
}
void GgufWriter::add_i16(const std::string& key, int16_t v) {
  begin_entry(key, GgufValueType::kI16);
  put(kv_, v);
}
void GgufWriter::add_u32(const std::string& key, uint32_t v) {
  begin_entry(key, GgufValueType::kU32);
  put(kv_, v);
}
void GgufWriter::add_i32(const std::string& key, int32_t v) {
  begin_entry(key, GgufValueType::kI32);
  put(kv_, v);
}
void GgufWriter::add_u64(const std::string& key, uint64_t v) {
  begin_entry(key, GgufValueType::kU64);
  put(kv_, v);
}
void GgufWriter::add_i64(const std::string& key, int64_t v) {
  begin_entry(key, GgufValueType::kI64);
  put(kv_, v);
}
void GgufWriter::add_f32(const std::string& key, float v) {
  begin_entry(key, GgufValueType::kF32);
  put(kv_, v);
}
void GgufWriter::add_f64(const std::string& key, double v) {
  begin_entry(key, GgufValueType::kF64);
  put(kv_, v);
}

void GgufWriter::add_bool(const std::string& key, bool v) {
  begin_entry(key, GgufValueType::kBool);
  put<uint8_t>(kv_, v ? 1 : 0);
}

void GgufWriter::add_string(const std::string& key, const std::string& v) {
  begin_entry(key, GgufValueType::kString);
  put_string(kv_, v);
}

void GgufWriter::add_string_array(const std::string& key, const std::vector<std::string>& v) {
  begin_entry(key, GgufValueType::kArray);
  put(kv_, static_cast<uint32_t>(GgufValueType::kString));
  put<uint64_t>(kv_, v.size());
  for (const std::string& s : v) put_string(kv_, s);
}

void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  add_int_array(key, GgufValueType::kI32, std::vector<int64_t>(v.begin(), v.end()));
}

void GgufWriter::add_f32_array(const std::string& key, const std::vector<float>& v) {
  add_float_array(key, GgufValueType::kF32, std::vector<double>(v.begin(), v.end()));
}

void GgufWriter::add_bool_array(const std::string& key, const std::vector<bool>& v) {
  begin_entry(key, GgufValueType::kArray);
  put(kv_, static_cast<uint32_t>(GgufValueType::kBool));
  put<uint64_t>(kv_, v.size());
  for (bool b : v) put<uint8_t>(kv_, b ? 1 : 0);
}

void GgufWriter::add_int_array(const std::string& key, GgufValueType element_type,
                               const std::vector<int64_t>& v) {
  begin_entry(key, GgufValueType::kArray);
  put(kv_, static_cast<uint32_t>(element_type));
  put<uint64_t>(kv_, v.size());
  for (int64_t x : v) put_integer(kv_, element_type, x);
}

void GgufWriter::add_float_array(const std::string& key, GgufValueType element_type,
                                 const std::vector<double>& v) {
  if (element_type != GgufValueType::kF32 && element_type != GgufValueType::kF64) {
    throw std::invalid_argument("GgufWriter::add_float_array: element type must be F32 or F64");
  }
  begin_entry(key, GgufValueType::kArray);
  put(kv_, static_cast<uint32_t>(element_type));
  put<uint64_t>(kv_, v.size());
  for (double x : v) {
    if (element_type == GgufValueType::kF32) {
      put(kv_, static_cast<float>(x));
    } else {
      put(kv_, x);
    }
  }
}

void GgufWriter::add_raw(const std::string& key, uint32_t type,
                         const std::vector<uint8_t>& encoded_value) {
  begin_entry(key, static_cast<GgufValueType>(type));
  kv_.insert(kv_.end(), encoded_value.begin(), encoded_value.end());
}

void GgufWriter::add_tensor(const std::string& name, const std::vector<int64_t>& dims,
                            GgmlType type, std::vector<uint8_t> bytes) {
  tensors_.push_back(Tensor{name, dims, type, std::move(bytes), std::nullopt});
}

void GgufWriter::add_tensor_f32(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<float>& values, GgmlType type) {
  std::vector<uint8_t> bytes;
  if (quantize_supported(type)) {
    if (values.size() % 32 != 0) throw std::invalid_argument("GgufWriter::add_tensor_f32: block types need a multiple of 32 values");
    bytes.resize(values.size() / 32 * static_cast<size_t>(ggml_type_size(type).block_bytes));
    quantize(type, values.data(), bytes.data(), static_cast<int64_t>(values.size()));
    add_tensor(name, dims, type, std::move(bytes));
    return;
  }
  for (float v : values) {
    switch (type) {
      case GgmlType::kF32: put(bytes, v); break;
      case GgmlType::kF16: put(bytes, fp32_to_fp16(v)); break;
      case GgmlType::kBF16: put(bytes, fp32_to_bf16(v)); break;
      default:
        throw std::invalid_argument("GgufWriter::add_tensor_f32: type must be F32, F16, BF16, Q8_0, Q4_0 or Q4_1");
    }
  }
  add_tensor(name, dims, type, std::move(bytes));
}

void GgufWriter::override_last_offset(uint64_t offset) {
  if (tensors_.empty()) throw std::logic_error("GgufWriter::override_last_offset: no tensor yet");
  tensors_.back().offset_override = offset;
}

std::vector<uint8_t> GgufWriter::bytes() const {
  std::vector<uint8_t> out = {'G', 'G', 'U', 'F'};
  const bool add_alignment = alignment_ != kDefaultAlignment && !has_alignment_key_;
  put(out, version_);
  put<uint64_t>(out, tensors_.size());
  put<uint64_t>(out, n_kv_ + (add_alignment ? 1 : 0));
  if (add_alignment) {
    put_string(out, kAlignmentKey);
    put(out, static_cast<uint32_t>(GgufValueType::kU32));
    put(out, static_cast<uint32_t>(alignment_));
  }
  out.insert(out.end(), kv_.begin(), kv_.end());

  // Each tensor's data starts at the next multiple of the alignment.
  std::vector<uint64_t> offsets;
  uint64_t data_end = 0;
  for (const Tensor& t : tensors_) {
    offsets.push_back(align_up(data_end, alignment_));
    data_end = offsets.back() + t.bytes.size();
  }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    put_string(out, t.name);
    put(out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t dim : t.dims) put(out, static_cast<uint64_t>(dim));
    put(out, static_cast<uint32_t>(t.type));
    put(out, t.offset_override.value_or(offsets[i]));
  }
  if (tensors_.empty()) return out;
  const uint64_t data_start = align_up(out.size(), alignment_);
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    out.resize(data_start + offsets[i], 0);  // zero padding up to the tensor
    out.insert(out.end(), tensors_[i].bytes.begin(), tensors_[i].bytes.end());
  }
  return out;
}

Status GgufWriter::write(const std::string& path) const {
  // Written beside the target and renamed over it: a crash mid-write (a
  // training checkpoint, say) never leaves a truncated file where a good one was.
  const std::vector<uint8_t> data = bytes();
  const std::string partial = path + ".partial";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  out.close();
  if (out && std::rename(partial.c_str(), path.c_str()) == 0) return {};
  std::remove(partial.c_str());
  return Error{ErrorCode::kIo, "cannot write " + path + ": check that its folder exists and is writable"};
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = float_bits(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN: keep the top payload bits, force quiet
    return static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  // 65520 and above round to infinity.
  if (magnitude >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal (or zero) in fp16
    // The fp16 mantissa is |f| * 2^24, rounded to nearest even (exact scaling).
    const float scaled = std::fabs(f) * 0x1p24f;
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa
  // bits to nearest even; a carry correctly bumps the exponent.
  const uint32_t rounded = magnitude + 0xFFFu + ((magnitude >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
}

uint16_t fp32_to_bf16(float f) {
  const uint32_t x = float_bits(f);
  const bool nan = (x & 0x7FFFFFFFu) > 0x7F800000u;
  if (nan) return static_cast<uint16_t>((x >> 16) | 0x40u);  // kept quiet
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace kvframe::runtime
