// GgufFile: owns the bytes (a mapping or a copy) and what the parser found in
// them, and answers typed metadata queries.
#include <memory>
#include <unordered_map>

#include "gguf_parser.h"
#include "kvframe/runtime_gguf/gguf.h"
#include "mapped_file.h"

namespace kvframe::runtime {

using gguf_detail::MappedFile;
using gguf_detail::ParsedGguf;

int64_t GgufTensorInfo::n_elements() const {
  int64_t n = 1;
  for (int64_t dim : dims) n *= dim;  // validated by the parser: no overflow
  return n;
}

struct GgufFile::Impl {
  std::string path;
  // The bytes: a mapping (open()) or a copy (parse()), shared with whoever
  // keeps tensors' data past the file (bytes_owner()).
  std::shared_ptr<const void> bytes;
  ParsedGguf parsed;
  // Views into parsed's names; they live on the heap with the Impl.
  std::unordered_map<std::string_view, std::size_t> key_index;
  std::unordered_map<std::string_view, std::size_t> tensor_index;

  // Parses the bytes `impl` holds (data, size) and indexes the names.
  static Result<GgufFile> finish(std::unique_ptr<Impl> impl, const uint8_t* data,
                                 uint64_t size) {
    Result<ParsedGguf> result = gguf_detail::parse_gguf(data, size, impl->path);
    if (!result.ok()) return result.error();
    impl->parsed = std::move(result).value();
    const ParsedGguf& parsed = impl->parsed;
    for (std::size_t i = 0; i < parsed.metadata.size(); ++i) {
      impl->key_index.emplace(parsed.metadata[i].first, i);
    }
    for (std::size_t i = 0; i < parsed.tensors.size(); ++i) {
      impl->tensor_index.emplace(parsed.tensors[i].name, i);
    }
    return GgufFile(std::move(impl));
  }
};

Result<GgufFile> GgufFile::open(const std::string& path) {
  Result<MappedFile> mapping = MappedFile::open(path);
  if (!mapping.ok()) return mapping.error();
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  auto mapped = std::make_shared<MappedFile>(std::move(mapping).value());
  const uint8_t* data = mapped->data();
  const uint64_t size = mapped->size();
  impl->bytes = std::move(mapped);
  return Impl::finish(std::move(impl), data, size);
}

Result<GgufFile> GgufFile::parse(const uint8_t* data, std::size_t size) {
  auto impl = std::make_unique<Impl>();
  impl->path = "<memory>";
  auto copy = std::make_shared<std::vector<uint8_t>>(data, data + size);
  const uint8_t* copied = copy->data();
  impl->bytes = std::move(copy);
  return Impl::finish(std::move(impl), copied, size);
}

GgufFile::GgufFile(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

uint32_t GgufFile::version() const { return impl_->parsed.version; }
uint64_t GgufFile::alignment() const { return impl_->parsed.alignment; }
const std::string& GgufFile::path() const { return impl_->path; }
std::shared_ptr<const void> GgufFile::bytes_owner() const { return impl_->bytes; }

const std::vector<std::pair<std::string, GgufValue>>& GgufFile::metadata() const {
  return impl_->parsed.metadata;
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = impl_->key_index.find(key);
  return it == impl_->key_index.end() ? nullptr : &impl_->parsed.metadata[it->second].second;
}

const std::vector<GgufTensorInfo>& GgufFile::tensors() const { return impl_->parsed.tensors; }

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = impl_->tensor_index.find(name);
  return it == impl_->tensor_index.end() ? nullptr : &impl_->parsed.tensors[it->second];
}

}  // namespace kvframe::runtime
