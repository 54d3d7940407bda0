// Phi-3 / Phi-4-mini's variations of the one layer loop on a tiny file
// (test::phi3_shape(): fused Q|K|V and gate|up, partial rotary, LongRoPE's
// short and long factors): the libtorch path and the CPU's step kernels
// against the naive decoder, which rotates as ggml_rope_ext does; and the
// files kvframe refuses.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <string>

#include "gguf_writer.h"
#include "kvframe/runtime/model.h"
#include "naive_reference.h"
#include "tiny_runtime.h"

namespace kvframe::runtime {
namespace {

using test::TinyModelSpec;

const std::vector<int32_t> kPrompt = {257, 72, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 258, 10, 33, 0, 255, 128};

// fp32 against the double-precision reference, as model_test.cpp.
constexpr double kLogitTolerance = 2e-4;

GgufFile parsed(const std::vector<uint8_t>& bytes) {
  auto file = GgufFile::parse(bytes.data(), bytes.size());
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  return std::move(file).value();
}

// A prefill on each path, then steps one token at a time on the step
// kernels' path: every position's logits against the naive decoder, the
// model loaded for `context` tokens and the reference rotating with the
// LongRoPE set that context takes.
void expect_paths_match_naive(const GgufFile& file, int64_t context, bool long_factors) {
  const auto reference = test::naive_logits(file, kPrompt, long_factors);
  for (bool step_kernels : {false, true}) {
    SCOPED_TRACE(step_kernels ? "step kernels" : "libtorch");
    ModelParams params;
    params.dtype = "fp32";
    params.step_kernels = step_kernels;
    params.int8_activations = false;  // the reference's fp32 arithmetic
    params.context = context;
    auto model = Model::load(file, params);
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    EXPECT_EQ((*model)->config().long_rope, long_factors);
    const double worst = test::largest_gap_to(**model, kPrompt, reference);
    EXPECT_LT(worst, kLogitTolerance) << "largest |logit - reference| = " << worst;
  }
}

TEST(Phi3, BothPathsMatchTheNaiveDecoder) {
  for (GgmlType type : {GgmlType::kF32, GgmlType::kQ8_0}) {
    SCOPED_TRACE(ggml_type_name(type));
    TinyModelSpec spec = test::phi3_shape();
    spec.weight_type = type;
    const std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
    expect_paths_match_naive(parsed(bytes), 0, false);
  }
}

// llama.cpp rotates with the long factors when its context per sequence,
// rounded up to 256, exceeds rope.scaling.original_context_length (here
// 512: a quarter of context_length), the short ones otherwise; the model
// loaded for the same context does as it does, on both paths, and reports
// the context its factors hold.
TEST(Phi3, LongRopeFactorsPastTheOriginalContext) {
  TinyModelSpec spec = test::phi3_shape();
  spec.n_ctx = 2048;
  const std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
  const GgufFile file = parsed(bytes);
  // The two sets must move the logits well past the tolerance for the
  // comparison to tell them apart.
  EXPECT_GT(test::largest_difference(test::naive_logits(file, kPrompt, false), test::naive_logits(file, kPrompt, true)),
            100 * kLogitTolerance);

  for (const auto& [context, long_factors] :
       {std::pair<int64_t, bool>{0, false}, {512, false}, {513, true}, {4096, true}}) {
    SCOPED_TRACE("context " + std::to_string(context));
    expect_paths_match_naive(file, context, long_factors);
    ModelParams params;
    params.context = context;
    const ModelConfig c = Model::load(file, params).value()->config();
    EXPECT_EQ(c.rope.freq_factors, long_factors ? spec.rope_factors_long : spec.rope_factors_short);
    EXPECT_FLOAT_EQ(static_cast<float>(c.rope.attn_factor), 1.19f);  // with either set, as llama.cpp
    EXPECT_EQ(c.n_ctx_train, long_factors ? 2048 : 512);              // context_length, or the original one
  }
  // Block KV made with one set is not the other's.
  ModelParams long_context;
  long_context.context = 4096;
  EXPECT_NE(Model::load(file).value()->context_fingerprint(),
            Model::load(file, long_context).value()->context_fingerprint());
}

// Loaded with the short factors, the model refuses a cache past the context
// they hold (rope.scaling.original_context_length: a quarter of
// context_length here), whose positions they would rotate wrong; at that
// length it runs. Loaded for a longer context (the long factors) it takes
// the longer cache, and one past context_length too, as llama.cpp lets a
// model run past its trained context — as it lets other architectures.
TEST(Phi3, ShortFactorsRefuseACachePastTheirContext) {
  const TinyModelSpec spec = test::phi3_shape();
  const int64_t limit = spec.n_ctx / 4;
  auto short_model = test::load_tiny_model(spec);
  ASSERT_TRUE(short_model);
  auto at_limit = short_model->new_cache(limit);
  ASSERT_TRUE(at_limit.ok()) << at_limit.error().to_string();
  EXPECT_TRUE(short_model->forward(test::token_ids(test::random_tokens(limit, 5)), *at_limit).ok());
  auto past = short_model->new_cache(limit + 1);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, ErrorCode::kInvalidArgument);
  for (const std::string& named : {std::to_string(limit), std::string("phi3.rope.scaling.original_context_length"),
                                   "--model-context " + std::to_string(limit + 1)}) {
    EXPECT_NE(past.error().message.find(named), std::string::npos) << past.error().message;
  }

  ModelParams longer;
  longer.context = limit + 1;
  auto long_model = test::load_tiny_model(spec, longer);
  ASSERT_TRUE(long_model);
  ASSERT_TRUE(long_model->config().long_rope);
  auto past_limit = long_model->new_cache(limit + 1);
  ASSERT_TRUE(past_limit.ok()) << past_limit.error().to_string();
  EXPECT_TRUE(long_model->forward(test::token_ids(test::random_tokens(limit + 1, 5)), *past_limit).ok());
  EXPECT_TRUE(long_model->new_cache(2 * spec.n_ctx).ok());

  auto llama = test::load_tiny_model(TinyModelSpec{});
  ASSERT_TRUE(llama);
  EXPECT_TRUE(llama->new_cache(2 * TinyModelSpec{}.n_ctx).ok());
}

// The config as read: partial rotary, LongRoPE's short factors and
// attention factor, and the context those factors are for.
TEST(Phi3, ConfigReadsPartialRotaryAndLongRope) {
  const TinyModelSpec spec = test::phi3_shape();
  auto model = test::load_tiny_model(spec);
  ASSERT_TRUE(model);
  const ModelConfig& c = model->config();
  EXPECT_TRUE(c.fused_in_file);
  EXPECT_EQ(c.rope.rotary_dims, 12);
  EXPECT_FLOAT_EQ(static_cast<float>(c.rope.attn_factor), 1.19f);
  EXPECT_EQ(c.rope.freq_factors, spec.rope_factors_short);
  EXPECT_EQ(c.rope_original_context, spec.n_ctx / 4);
  EXPECT_FALSE(c.long_rope);
  EXPECT_EQ(c.n_ctx_train, spec.n_ctx / 4);  // rope.scaling.original_context_length
}

// The file with one tensor's dims (and bytes, F32) replaced.
std::vector<uint8_t> with_tensor(const GgufFile& file, const std::string& name, const std::vector<int64_t>& dims) {
  test::GgufWriter w;
  test::copy_scalar_metadata(file, w);
  for (const GgufTensorInfo& t : file.tensors()) {
    if (t.name != name) {
      w.add_tensor(t.name, t.dims, t.type, std::vector<uint8_t>(t.data, t.data + t.nbytes));
      continue;
    }
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    w.add_tensor_f32(name, dims, std::vector<float>(static_cast<size_t>(n), 1.0f));
  }
  return w.bytes();
}

void expect_refused(const std::vector<uint8_t>& bytes, ErrorCode code, const std::string& named,
                    const ModelParams& params = {}) {
  const GgufFile file = parsed(bytes);
  auto model = Model::load(file, params);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, code) << model.error().to_string();
  EXPECT_NE(model.error().message.find(named), std::string::npos) << model.error().message;
}

TEST(Phi3Errors, BadFilesAreTypedErrorsNamingTheTensorOrKey) {
  const TinyModelSpec spec = test::phi3_shape();
  std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
  const GgufFile file = parsed(bytes);
  const int64_t E = spec.n_embd;

  std::vector<uint8_t> renamed = bytes;
  const std::string from = "blk.1.attn_qkv", to = "blk.1.attn_qkz";
  std::copy(to.begin(), to.end(), std::search(renamed.begin(), renamed.end(), from.begin(), from.end()));
  expect_refused(renamed, ErrorCode::kMissingTensor, "blk.1.attn_qkv.weight");

  // gate|up must be 2 n_ff rows: up alone is not enough.
  expect_refused(with_tensor(file, "blk.0.ffn_up.weight", {E, spec.n_ff}), ErrorCode::kShapeMismatch,
                 "blk.0.ffn_up.weight");
  expect_refused(with_tensor(file, "blk.0.attn_qkv.weight", {E, spec.n_head * 16}), ErrorCode::kShapeMismatch,
                 "blk.0.attn_qkv.weight");
  // One factor per rotated pair (6), for the long factors too.
  expect_refused(with_tensor(file, "rope_factors_short.weight", {8}), ErrorCode::kShapeMismatch,
                 "rope_factors_short.weight");
  expect_refused(with_tensor(file, "rope_factors_long.weight", {5}), ErrorCode::kShapeMismatch,
                 "rope_factors_long.weight");

  // Loaded past the original context, a file with short factors alone.
  TinyModelSpec short_only = spec;
  short_only.rope_factors_long.clear();
  ModelParams long_context;
  long_context.context = spec.n_ctx;
  expect_refused(test::tiny_model_bytes(short_only), ErrorCode::kMissingTensor, "rope_factors_long.weight",
                 long_context);
  long_context.context = -1;
  expect_refused(bytes, ErrorCode::kInvalidArgument, "-1", long_context);

  TinyModelSpec windowed = spec;
  windowed.sliding_window = 8;
  expect_refused(test::tiny_model_bytes(windowed), ErrorCode::kUnsupportedArch, "phi3.attention.sliding_window");
}

// Partial rotary stays phi3's: another architecture's file saying it is refused.
TEST(Phi3Errors, PartialRotaryElsewhereIsRefused) {
  TinyModelSpec spec;
  spec.rope_dims = 12;
  const std::vector<uint8_t> bytes = test::tiny_model_bytes(spec);
  expect_refused(bytes, ErrorCode::kUnsupportedArch, "llama.rope.dimension_count");
}

}  // namespace
}  // namespace kvframe::runtime
