#include "tensor_infos.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <unordered_set>

namespace kvframe::runtime::gguf_detail {
namespace {

constexpr uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// Smallest info: name length, n_dims, one dim, type, offset.
constexpr uint64_t kMinInfoBytes = 8 + 4 + 8 + 4 + 8;
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

std::string where(const std::string& name) { return "tensor '" + name + "'"; }

struct RawInfo {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t type = 0;
  uint64_t offset = 0;
};

// Reads one info without judging it, so a cut-off file reads as truncated.
Status read_raw_info(ParseContext& ctx, uint64_t index, RawInfo& info) {
  ByteReader& in = ctx.in;
  if (!in.read_string(info.name)) {
    return ctx.truncated("the name of tensor info " + std::to_string(index));
  }
  uint32_t n_dims = 0;
  if (!in.read(n_dims)) return ctx.truncated(where(info.name));
  if (n_dims == 0 || n_dims > kMaxDims) {
    return ctx.error(ErrorCode::kCorrupt,
                     where(info.name) + " has " + std::to_string(n_dims) +
                         " dimensions; GGUF tensors have 1 to 4, so the file is corrupt");
  }
  info.dims.resize(n_dims);
  for (uint64_t& dim : info.dims) {
    if (!in.read(dim)) return ctx.truncated(where(info.name));
  }
  if (!in.read(info.type) || !in.read(info.offset)) return ctx.truncated(where(info.name));
  return {};
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  }
  return text + "]";
}

// Judges a raw info and turns it into a GgufTensorInfo with nbytes set.
Result<GgufTensorInfo> validate(const ParseContext& ctx, RawInfo raw) {
  const std::string name = where(raw.name);
  uint64_t n_elements = 1;
  for (uint64_t dim : raw.dims) {
    if (dim == 0 || dim > kInt64Max || n_elements > kInt64Max / dim) {
      return ctx.error(ErrorCode::kCorrupt, name + " has dimensions " + dims_text(raw.dims) +
                                                "; each must be at least 1 and their product "
                                                "fit in 63 bits, so the file is corrupt");
    }
    n_elements *= dim;
  }
  const auto type = static_cast<GgmlType>(raw.type);
  const GgmlTypeSize size = ggml_type_size(type);
  if (size.block_size == 0) {
    return ctx.error(ErrorCode::kUnsupportedType,
                     name + " has ggml type " + std::to_string(raw.type) +
                         ", which kvframe cannot even size; use a model quantized as F32, F16, "
                         "BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K");
  }
  const auto block_size = static_cast<uint64_t>(size.block_size);
  if (raw.dims[0] % block_size != 0) {
    return ctx.error(ErrorCode::kCorrupt, name + " has rows of " + std::to_string(raw.dims[0]) +
                                              " elements, not a multiple of the " +
                                              ggml_type_name(type) + " block size " +
                                              std::to_string(block_size) + "; the file is corrupt");
  }
  // nbytes must fit in 64 bits (F32 with 2^62 elements would not).
  const uint64_t n_blocks = n_elements / block_size;
  const auto block_bytes = static_cast<uint64_t>(size.block_bytes);
  if (n_blocks > std::numeric_limits<uint64_t>::max() / block_bytes) {
    return ctx.error(ErrorCode::kCorrupt,
                     name + " has dimensions " + dims_text(raw.dims) +
                         ", more bytes than any file can hold; the file is corrupt");
  }
  GgufTensorInfo info;
  info.name = std::move(raw.name);
  info.dims.assign(raw.dims.begin(), raw.dims.end());
  info.type = type;
  info.offset = raw.offset;
  info.nbytes = n_blocks * block_bytes;
  info.data = nullptr;
  return info;
}

}  // namespace

Result<std::vector<GgufTensorInfo>> read_tensor_infos(ParseContext& ctx, uint64_t n_tensors) {
  if (n_tensors > ctx.in.remaining() / kMinInfoBytes) {
    return ctx.too_many("the tensor info section", n_tensors, kMinInfoBytes);
  }
  std::vector<GgufTensorInfo> tensors;
  tensors.reserve(initial_capacity(n_tensors));
  std::unordered_set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    RawInfo raw;
    if (Status status = read_raw_info(ctx, i, raw); !status.ok()) return status.error();
    if (!names.insert(raw.name).second) {
      return ctx.error(ErrorCode::kCorrupt,
                       where(raw.name) + " appears twice; the file is corrupt");
    }
    Result<GgufTensorInfo> info = validate(ctx, std::move(raw));
    if (!info.ok()) return info.error();
    tensors.push_back(std::move(info).value());
  }
  return tensors;
}

Status place_tensors(const ParseContext& ctx, const uint8_t* file, uint64_t data_start,
                     uint64_t alignment, std::vector<GgufTensorInfo>& tensors) {
  const uint64_t file_size = ctx.in.size();
  for (GgufTensorInfo& t : tensors) {
    if (t.offset % alignment != 0) {
      return ctx.error(ErrorCode::kCorrupt, where(t.name) + ": offset " + std::to_string(t.offset) +
                                                " is not a multiple of the alignment " +
                                                std::to_string(alignment) +
                                                "; the file is corrupt");
    }
    uint64_t start = 0;
    uint64_t end = 0;
    if (__builtin_add_overflow(data_start, t.offset, &start) ||
        __builtin_add_overflow(start, t.nbytes, &end)) {
      return ctx.error(ErrorCode::kCorrupt, where(t.name) + ": offset " + std::to_string(t.offset) +
                                                " lies beyond any file; the file is corrupt");
    }
    if (end > file_size) {
      return ctx.error(ErrorCode::kTruncated,
                       where(t.name) + ": data ends at byte " + std::to_string(end) +
                           " but the file has " + std::to_string(file_size) +
                           " bytes; the file is truncated — download it again");
    }
    t.data = file + start;
  }
  // Sorted by offset, each tensor must end before the next begins.
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    const GgufTensorInfo& prev = tensors[order[i - 1]];
    const GgufTensorInfo& next = tensors[order[i]];
    if (prev.offset + prev.nbytes > next.offset) {
      return ctx.error(ErrorCode::kCorrupt,
                       where(prev.name) + " (data bytes " + std::to_string(prev.offset) + " to " +
                           std::to_string(prev.offset + prev.nbytes) + ") overlaps " +
                           where(next.name) + " (from byte " + std::to_string(next.offset) +
                           "); the file is corrupt");
    }
  }
  return {};
}

}  // namespace kvframe::runtime::gguf_detail
