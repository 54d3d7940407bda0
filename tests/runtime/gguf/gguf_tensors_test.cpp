// Tensor infos, alignment and data placement; opening files from disk.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "gguf_test_util.h"

namespace kvframe::runtime {
namespace {

using test::GgufWriter;

std::vector<uint8_t> counting_bytes(std::size_t n, uint8_t first) {
  std::vector<uint8_t> bytes(n);
  std::iota(bytes.begin(), bytes.end(), first);
  return bytes;
}

// Three tensors whose sizes are not multiples of any alignment, so each
// alignment shifts where the data goes.
GgufWriter three_tensors(uint64_t alignment) {
  GgufWriter w(3, alignment);
  w.add_string("general.architecture", "llama");
  w.add_tensor("a", {3}, GgmlType::kF32, counting_bytes(12, 1));
  w.add_tensor("b.weight", {32, 2}, GgmlType::kQ8_0, counting_bytes(68, 100));
  w.add_tensor("c", {5, 1, 1, 1}, GgmlType::kBF16, counting_bytes(10, 200));
  return w;
}

void expect_three_tensors(const GgufFile& file) {
  ASSERT_EQ(file.tensors().size(), 3u);
  const GgufTensorInfo& a = file.tensors()[0];
  const GgufTensorInfo& b = file.tensors()[1];
  const GgufTensorInfo& c = file.tensors()[2];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(a.type, GgmlType::kF32);
  EXPECT_EQ(a.nbytes, 12u);
  EXPECT_EQ(a.n_elements(), 3);
  EXPECT_EQ(b.dims, (std::vector<int64_t>{32, 2}));
  EXPECT_EQ(b.type, GgmlType::kQ8_0);
  EXPECT_EQ(b.nbytes, 68u);
  EXPECT_EQ(b.n_elements(), 64);
  EXPECT_EQ(c.dims, (std::vector<int64_t>{5, 1, 1, 1}));
  EXPECT_EQ(c.nbytes, 10u);
  for (const GgufTensorInfo& t : file.tensors()) {
    EXPECT_EQ(t.offset % file.alignment(), 0u) << t.name;
  }
  EXPECT_EQ(std::vector<uint8_t>(a.data, a.data + a.nbytes), counting_bytes(12, 1));
  EXPECT_EQ(std::vector<uint8_t>(b.data, b.data + b.nbytes), counting_bytes(68, 100));
  EXPECT_EQ(std::vector<uint8_t>(c.data, c.data + c.nbytes), counting_bytes(10, 200));
  EXPECT_EQ(file.find_tensor("b.weight"), &b);
  EXPECT_EQ(file.find_tensor("b"), nullptr);
}

TEST(GgufTensors, InfosAndDataRoundTrip) {
  const Result<GgufFile> file = parse_bytes(three_tensors(32).bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->alignment(), 32u);
  expect_three_tensors(*file);
}

TEST(GgufTensors, HonoursGeneralAlignment) {
  for (uint64_t alignment : {1u, 8u, 64u, 4096u}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    const Result<GgufFile> file = parse_bytes(three_tensors(alignment).bytes());
    ASSERT_TRUE(file.ok()) << file.error().to_string();
    EXPECT_EQ(file->alignment(), alignment);
    expect_three_tensors(*file);
  }
}

TEST(GgufTensors, RejectsAlignmentThatIsNotAPowerOfTwo) {
  for (uint32_t alignment : {0u, 3u, 48u}) {
    GgufWriter w;
    w.add_u32("general.alignment", alignment);
    EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt, "'general.alignment'"));
  }
  GgufWriter w;
  w.add_string("general.alignment", "32");
  EXPECT_TRUE(fails_with(parse_bytes(w.bytes()), ErrorCode::kCorrupt, "'general.alignment'"));
}

TEST(GgufTensors, VocabularyOnlyFileHasNoTensors) {
  GgufWriter w;
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b"});
  const Result<GgufFile> file = parse_bytes(w.bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_TRUE(file->tensors().empty());
}

TEST(GgufTensors, AcceptsTypesItCanSizeButNotDequantize) {
  GgufWriter w;
  w.add_tensor("q8_1", {32}, GgmlType::kQ8_1, std::vector<uint8_t>(36));
  const Result<GgufFile> file = parse_bytes(w.bytes());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  std::vector<float> out(32);
  const Status status = dequantize_tensor(file->tensors()[0], out.data());
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kUnsupportedType);
  EXPECT_NE(status.error().message.find("tensor 'q8_1' has type Q8_1"), std::string::npos)
      << status.error().message;
}

class TempFile {
 public:
  TempFile() : path_(std::filesystem::temp_directory_path() /
                     ("kvframe_gguf_test_" + std::to_string(::getpid()) + ".gguf")) {}
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(GgufOpen, MapsAFileFromDisk) {
  TempFile temp;
  ASSERT_TRUE(three_tensors(64).write(temp.path()).ok());
  const Result<GgufFile> file = GgufFile::open(temp.path());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->path(), temp.path());
  expect_three_tensors(*file);
}

TEST(GgufOpen, ErrorsNameThePath) {
  EXPECT_TRUE(fails_with(GgufFile::open("/nonexistent/model.gguf"), ErrorCode::kIo,
                         "'/nonexistent/model.gguf'"));
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_TRUE(fails_with(GgufFile::open(dir), ErrorCode::kIo, "not a regular file"));

  TempFile temp;
  std::ofstream(temp.path()).close();
  EXPECT_TRUE(fails_with(GgufFile::open(temp.path()), ErrorCode::kTruncated, temp.path()));

  std::ofstream(temp.path()) << "PK\x03\x04 a zip file";
  EXPECT_TRUE(fails_with(GgufFile::open(temp.path()), ErrorCode::kBadMagic,
                         temp.path() + ": not a GGUF file"));
}

TEST(GgufOpen, MovedFileKeepsItsData) {
  Result<GgufFile> parsed = parse_bytes(three_tensors(32).bytes());
  ASSERT_TRUE(parsed.ok());
  GgufFile first = std::move(parsed).value();
  GgufFile second = std::move(first);
  expect_three_tensors(second);
  EXPECT_NE(second.find("general.architecture"), nullptr);
}

}  // namespace
}  // namespace kvframe::runtime
