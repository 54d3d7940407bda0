// Every prefix of a valid file is an error (truncated or corrupt), never a
// crash; flipping any byte gives an error or a file that is safe to use.
#include "gguf_samples.h"
#include "gguf_test_util.h"

namespace kvframe::runtime {
namespace {

using test::GgufWriter;

std::vector<uint8_t> rich_file() { return test::every_type_sample(3, 64).bytes(); }

// Uses everything a parsed file offers, so a bad pointer or size shows up
// (under the sanitizers, as a report).
void use_everything(const GgufFile& file) {
  std::size_t touched = 0;
  for (const auto& [key, value] : file.metadata()) {
    touched += key.size() + value.index();
    EXPECT_EQ(file.find(key), &value);
  }
  for (const GgufTensorInfo& t : file.tensors()) {
    EXPECT_EQ(file.find_tensor(t.name), &t);
    if (!dequantize_supported(t.type)) continue;
    std::vector<float> out(static_cast<std::size_t>(t.n_elements()));
    EXPECT_TRUE(dequantize_tensor(t, out.data()).ok());
    touched += out.size();
  }
  EXPECT_GT(touched + 1, 0u);
}

TEST(GgufTruncation, TheRichFileParses) {
  const std::vector<uint8_t> bytes = rich_file();
  const Result<GgufFile> file = parse_bytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->tensors().size(), 14u);
  EXPECT_EQ(file->metadata().size(), 21u);  // with general.alignment
  use_everything(*file);
}

TEST(GgufTruncation, EveryPrefixIsTruncatedOrCorrupt) {
  const std::vector<uint8_t> bytes = rich_file();
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const Result<GgufFile> file = parse_bytes(bytes, size);
    ASSERT_FALSE(file.ok()) << "a prefix of " << size << " bytes parsed";
    const ErrorCode code = file.error().code;
    EXPECT_TRUE(code == ErrorCode::kTruncated || code == ErrorCode::kCorrupt)
        << size << " bytes: " << file.error().to_string();
    EXPECT_NE(file.error().message.find("<memory>: "), std::string::npos);
  }
}

TEST(GgufTruncation, FlippedBytesNeverBreakTheReader) {
  const std::vector<uint8_t> original = rich_file();
  for (std::size_t at = 0; at < original.size(); ++at) {
    for (int mask : {0x01, 0x80, 0xFF}) {
      std::vector<uint8_t> bytes = original;
      bytes[at] = static_cast<uint8_t>(bytes[at] ^ mask);
      const Result<GgufFile> file = parse_bytes(bytes);
      if (file.ok()) {
        use_everything(*file);
      } else {
        EXPECT_FALSE(file.error().message.empty());
      }
    }
  }
}

}  // namespace
}  // namespace kvframe::runtime
