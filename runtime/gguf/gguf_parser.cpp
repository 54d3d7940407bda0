#include "gguf_parser.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "tensor_infos.h"

namespace kvframe::runtime::gguf_detail {
namespace {

constexpr char kMagic[4] = {'G', 'G', 'U', 'F'};
constexpr uint64_t kDefaultAlignment = 32;
constexpr const char* kAlignmentKey = "general.alignment";

uint32_t byte_swap(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xFF00u) | ((v << 8) & 0xFF0000u) | (v << 24);
}

Status check_magic(const ParseContext& ctx, const uint8_t* data, uint64_t size) {
  const auto n = static_cast<std::size_t>(std::min<uint64_t>(size, sizeof kMagic));
  if (std::memcmp(data, kMagic, n) != 0) {
    char shown[64];
    std::snprintf(shown, sizeof shown, "%02x %02x %02x %02x", data[0], n > 1 ? data[1] : 0,
                  n > 2 ? data[2] : 0, n > 3 ? data[3] : 0);
    return ctx.error(ErrorCode::kBadMagic, std::string("not a GGUF file: it starts with bytes ") +
                                               shown + ", not \"GGUF\"");
  }
  if (n < sizeof kMagic) return ctx.truncated("the GGUF header");
  return {};
}

Status check_version(const ParseContext& ctx, uint32_t version) {
  if (version == 2 || version == 3) return {};
  if (byte_swap(version) == 2 || byte_swap(version) == 3) {
    return ctx.error(ErrorCode::kUnsupportedVersion,
                     "a big-endian GGUF file; kvframe reads little-endian files only");
  }
  return ctx.error(ErrorCode::kUnsupportedVersion,
                   "GGUF version " + std::to_string(version) +
                       " is not supported (only 2 and 3); convert the model again with a "
                       "current llama.cpp");
}

// general.alignment: optional, an integer power of two (u32 per the spec).
Result<uint64_t> alignment_of(const ParseContext& ctx, const Metadata& metadata) {
  for (const auto& [key, value] : metadata) {
    if (key != kAlignmentKey) continue;
    uint64_t alignment = 0;
    if (const auto* i = std::get_if<int64_t>(&value)) {
      alignment = *i > 0 ? static_cast<uint64_t>(*i) : 0;
    } else if (const auto* u = std::get_if<uint64_t>(&value)) {
      alignment = *u;
    } else {
      return ctx.error(ErrorCode::kCorrupt, std::string("metadata key '") + kAlignmentKey +
                                                "' is not an integer; the file is corrupt");
    }
    if (alignment == 0 || alignment > UINT32_MAX || (alignment & (alignment - 1)) != 0) {
      return ctx.error(ErrorCode::kCorrupt,
                       std::string("metadata key '") + kAlignmentKey +
                           "' must be a power of two below 2^32; the file is corrupt");
    }
    return alignment;
  }
  return kDefaultAlignment;
}

}  // namespace

Result<ParsedGguf> parse_gguf(const uint8_t* data, uint64_t size, const std::string& source) {
  ParseContext ctx{ByteReader(data, size), source};
  if (size == 0) return ctx.truncated("the GGUF header (the file is empty)");
  if (Status status = check_magic(ctx, data, size); !status.ok()) return status.error();

  ParsedGguf parsed;
  uint32_t magic = 0;
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  if (!ctx.in.read(magic) || !ctx.in.read(parsed.version)) return ctx.truncated("the GGUF header");
  if (Status status = check_version(ctx, parsed.version); !status.ok()) return status.error();
  if (!ctx.in.read(n_tensors) || !ctx.in.read(n_kv)) return ctx.truncated("the GGUF header");

  Result<Metadata> metadata = read_metadata(ctx, n_kv);
  if (!metadata.ok()) return metadata.error();
  parsed.metadata = std::move(metadata).value();
  Result<uint64_t> alignment = alignment_of(ctx, parsed.metadata);
  if (!alignment.ok()) return alignment.error();
  parsed.alignment = *alignment;

  Result<std::vector<GgufTensorInfo>> tensors = read_tensor_infos(ctx, n_tensors);
  if (!tensors.ok()) return tensors.error();
  parsed.tensors = std::move(tensors).value();

  // The data section starts at the first aligned byte after the infos; the
  // offset is at most the file size and alignment below 2^32, so no overflow.
  const uint64_t data_start =
      (ctx.in.offset() + parsed.alignment - 1) / parsed.alignment * parsed.alignment;
  if (Status status = place_tensors(ctx, data, data_start, parsed.alignment, parsed.tensors); !status.ok()) {
    return status.error();
  }
  return parsed;
}

}  // namespace kvframe::runtime::gguf_detail
