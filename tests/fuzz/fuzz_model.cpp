// Fuzz entry point over model files (read_model_config and Model::load on
// top of the GGUF reader): a model is a file a studio may download from
// anyone, of any architecture kvframe runs. The input is the file's bytes.
// A file that loads must answer: a forward pass over a few tokens gives
// logits of the vocabulary's width. One that does not load must say why
// with a typed error and a message; anything large is skipped so the fuzzer
// spends its time in the checks, not in big matmuls.
#include <ATen/ATen.h>

#include <algorithm>
#include <memory>

#include "fuzz_check.h"
#include "fuzz_entry.h"
#include "kvframe/runtime/model.h"

namespace {

using namespace kvframe::runtime;
using kvframe::ErrorCode;
using kvframe::Result;

// Errors a bad model file may get: never kBackend or an internal one.
bool is_file_error(ErrorCode code) {
  switch (code) {
    case ErrorCode::kCorrupt:
    case ErrorCode::kUnsupportedArch:
    case ErrorCode::kUnsupportedType:
    case ErrorCode::kMissingKey:
    case ErrorCode::kWrongKeyType:
    case ErrorCode::kMissingTensor:
    case ErrorCode::kShapeMismatch:
    case ErrorCode::kInvalidArgument:
      return true;
    default:
      return false;
  }
}

constexpr int64_t kMaxParams = int64_t{1} << 20;  // bigger files are fine, just slow to fuzz

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Result<GgufFile> file = GgufFile::parse(data, size);
  if (!file.ok()) return 0;  // the GGUF reader's own target covers this
  const Result<ModelConfig> config = read_model_config(*file);
  if (!config.ok()) {
    FUZZ_CHECK(is_file_error(config.error().code) && !config.error().message.empty(),
               "a bad config got " + config.error().to_string());
    return 0;
  }
  const ModelConfig& c = *config;
  if (c.matmul_params() > kMaxParams || c.n_layer > 8 || c.n_ctx_train < 1) return 0;
  ModelParams params;
  params.dtype = "fp32";
  const auto model = Model::load(*file, params);
  if (!model.ok()) {
    FUZZ_CHECK(is_file_error(model.error().code) && !model.error().message.empty(),
               "a bad model got " + model.error().to_string());
    return 0;
  }
  constexpr int64_t kCacheTokens = 8;
  auto made = (*model)->new_cache(kCacheTokens);
  if (!made.ok()) {  // a phi3 file whose short LongRoPE factors hold fewer positions
    FUZZ_CHECK(made.error().code == ErrorCode::kInvalidArgument && c.rope_original_context < kCacheTokens,
               "a model that loaded refused a cache of " + std::to_string(kCacheTokens) + ": " +
                   made.error().to_string());
    return 0;
  }
  KvCache& cache = *made;
  const std::vector<int64_t> ids = {0, std::min<int64_t>(1, c.n_vocab - 1), c.n_vocab - 1};
  const auto logits = (*model)->forward(at::tensor(ids, at::kLong), cache, /*all_logits=*/true);
  FUZZ_CHECK(logits.ok(), "a model that loaded cannot run: " + (logits.ok() ? std::string() : logits.error().to_string()));
  FUZZ_CHECK(logits->size(0) == 3 && logits->size(1) == c.n_vocab, "logits of the wrong shape");
  return 0;
}
