#include "metadata_parser.h"

#include <limits>
#include <unordered_set>

namespace kvframe::runtime::gguf_detail {
namespace {

// Value type codes as stored in the file (gguf_type in gguf.h of ggml).
enum ValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

// Bytes the smallest value of `type` takes; 0 for codes GGUF does not define.
uint64_t min_value_bytes(uint32_t type) {
  switch (type) {
    case kU8: case kI8: case kBool: return 1;
    case kU16: case kI16: return 2;
    case kU32: case kI32: case kF32: return 4;
    case kU64: case kI64: case kF64: return 8;
    case kString: return 8;     // the length, for an empty string
    case kArray: return 4 + 8;  // element type and count, for an empty array
    default: return 0;
  }
}

// Smallest entry: key length, value type, a one-byte value.
constexpr uint64_t kMinEntryBytes = 8 + 4 + 1;

bool is_integer(uint32_t type) {
  return type == kU8 || type == kI8 || type == kU16 || type == kI16 || type == kU32 ||
         type == kI32 || type == kU64 || type == kI64;
}

template <class T>
bool read_as_int64(ByteReader& in, int64_t& out) {
  T v;
  if (!in.read(v)) return false;
  out = static_cast<int64_t>(v);
  return true;
}

// An integer of any width; u64 values above INT64_MAX set `out_of_range`.
bool read_integer(ByteReader& in, uint32_t type, int64_t& out, bool& out_of_range) {
  out_of_range = false;
  switch (type) {
    case kU8: return read_as_int64<uint8_t>(in, out);
    case kI8: return read_as_int64<int8_t>(in, out);
    case kU16: return read_as_int64<uint16_t>(in, out);
    case kI16: return read_as_int64<int16_t>(in, out);
    case kU32: return read_as_int64<uint32_t>(in, out);
    case kI32: return read_as_int64<int32_t>(in, out);
    case kI64: return read_as_int64<int64_t>(in, out);
    default: {  // kU64
      uint64_t v;
      if (!in.read(v)) return false;
      out_of_range = v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      out = static_cast<int64_t>(v);
      return true;
    }
  }
}

bool read_float(ByteReader& in, uint32_t type, double& out) {
  if (type == kF32) {
    float v;
    if (!in.read(v)) return false;
    out = v;
    return true;
  }
  return in.read(out);
}

class MetadataParser {
 public:
  explicit MetadataParser(ParseContext& ctx) : ctx_(ctx), in_(ctx.in) {}

  Result<Metadata> read(uint64_t n_kv) {
    if (n_kv > in_.remaining() / kMinEntryBytes) {
      return ctx_.too_many("the metadata section", n_kv, kMinEntryBytes);
    }
    Metadata metadata;
    metadata.reserve(initial_capacity(n_kv));
    std::unordered_set<std::string> seen;
    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key;
      if (!in_.read_string(key)) {
        return ctx_.truncated("the name of metadata entry " + std::to_string(i));
      }
      if (!seen.insert(key).second) {
        return ctx_.error(ErrorCode::kCorrupt, where(key) + " appears twice; the file is corrupt");
      }
      uint32_t type = 0;
      if (!in_.read(type)) return ctx_.truncated(where(key));
      Result<GgufValue> value = read_value(type, key);
      if (!value.ok()) return value.error();
      metadata.emplace_back(std::move(key), std::move(value).value());
    }
    return metadata;
  }

 private:
  static std::string where(const std::string& key) { return "metadata key '" + key + "'"; }

  Error bad_type(const std::string& key, uint32_t type) const {
    return ctx_.error(ErrorCode::kCorrupt, where(key) + " has value type " + std::to_string(type) +
                                               ", which GGUF does not define; the file is corrupt");
  }
  Error bad_bool(const std::string& key, uint8_t b) const {
    return ctx_.error(ErrorCode::kCorrupt, where(key) + " holds the bool byte " +
                                               std::to_string(b) +
                                               " (only 0 and 1 are valid); the file is corrupt");
  }

  Error u64_out_of_range(const std::string& key) const {
    return ctx_.error(ErrorCode::kCorrupt,
                      where(key) + " holds a u64 array element above 2^63-1, which kvframe "
                                   "cannot represent");
  }

  Result<GgufValue> read_value(uint32_t type, const std::string& key) {
    if (type == kArray) return read_array(key);
    if (type == kString) {
      std::string s;
      if (!in_.read_string(s)) return ctx_.truncated(where(key));
      return GgufValue{std::move(s)};
    }
    if (type == kBool) {
      uint8_t b = 0;
      if (!in_.read(b)) return ctx_.truncated(where(key));
      if (b > 1) return bad_bool(key, b);
      return GgufValue{b == 1};
    }
    if (type == kF32 || type == kF64) {
      double v = 0;
      if (!read_float(in_, type, v)) return ctx_.truncated(where(key));
      return GgufValue{v};
    }
    if (type == kU64) {  // kept unsigned: sizes and seeds may use the top bit
      uint64_t v = 0;
      if (!in_.read(v)) return ctx_.truncated(where(key));
      return GgufValue{v};
    }
    if (is_integer(type)) {
      int64_t v = 0;
      bool out_of_range = false;
      if (!read_integer(in_, type, v, out_of_range)) return ctx_.truncated(where(key));
      return GgufValue{v};
    }
    return bad_type(key, type);
  }

  Result<GgufValue> read_array(const std::string& key) {
    uint32_t type = 0;
    uint64_t count = 0;
    if (!in_.read(type) || !in_.read(count)) return ctx_.truncated(where(key));
    if (type == kArray) {
      return ctx_.error(ErrorCode::kCorrupt,
                        where(key) + " is an array of arrays, which kvframe does not read "
                                     "(llama.cpp does not write them either)");
    }
    const uint64_t min_bytes = min_value_bytes(type);
    if (min_bytes == 0) return bad_type(key, type);
    if (count > in_.remaining() / min_bytes) return ctx_.too_many(where(key), count, min_bytes);
    const auto element = [&](uint64_t i) {
      return ctx_.truncated("element " + std::to_string(i) + " of " + where(key));
    };
    if (type == kString) {
      std::vector<std::string> out;
      out.reserve(initial_capacity(count));
      for (uint64_t i = 0; i < count; ++i) {
        if (!in_.read_string(out.emplace_back())) return element(i);
      }
      return GgufValue{GgufArray{std::move(out)}};
    }
    if (type == kBool) {
      std::vector<bool> out;
      out.reserve(initial_capacity(count));
      for (uint64_t i = 0; i < count; ++i) {
        uint8_t b = 0;
        if (!in_.read(b)) return element(i);
        if (b > 1) return bad_bool(key, b);
        out.push_back(b == 1);
      }
      return GgufValue{GgufArray{std::move(out)}};
    }
    if (type == kF32 || type == kF64) {
      std::vector<double> out;
      out.reserve(initial_capacity(count));
      for (uint64_t i = 0; i < count; ++i) {
        if (!read_float(in_, type, out.emplace_back())) return element(i);
      }
      return GgufValue{GgufArray{std::move(out)}};
    }
    std::vector<int64_t> out;
    out.reserve(initial_capacity(count));
    for (uint64_t i = 0; i < count; ++i) {
      bool out_of_range = false;
      if (!read_integer(in_, type, out.emplace_back(), out_of_range)) return element(i);
      if (out_of_range) return u64_out_of_range(key);
    }
    return GgufValue{GgufArray{std::move(out)}};
  }

  ParseContext& ctx_;
  ByteReader& in_;
};

}  // namespace

Result<Metadata> read_metadata(ParseContext& ctx, uint64_t n_kv) {
  return MetadataParser(ctx).read(n_kv);
}

}  // namespace kvframe::runtime::gguf_detail
