// SampleContext: a mode's KvContext fed token ids instead of frames.
#include "kvframe/runtime_engine/sample_context.h"

#include <xxhash.h>

#include "kv_context.h"

namespace kvframe::runtime {

struct SampleContext::Impl {
  std::unique_ptr<KvContext> context;
  int64_t capacity;
};

SampleContext::SampleContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SampleContext::~SampleContext() = default;

Result<std::unique_ptr<SampleContext>> SampleContext::open(Engine& engine, const SessionParams& params) {
  if (params.context < 16) return Error{ErrorCode::kInvalidArgument, "a context needs at least 16 tokens"};
  auto context = params.mode == AttentionMode::kBlock ? make_block_context(engine, params)
                                                       : make_causal_context(engine.model(), params.mode, params.context);
  if (!context) return context.error();
  return std::unique_ptr<SampleContext>(
      new SampleContext(std::make_unique<Impl>(Impl{std::move(context).value(), params.context})));
}

Result<const KvCache*> SampleContext::prepare(const PromptSample& sample, QueryReport& report) {
  if (sample.context_tokens() > impl_->capacity) {
    return Error{ErrorCode::kContextFull, "the sample's context has " + std::to_string(sample.context_tokens()) +
                                              " tokens; this SampleContext holds " + std::to_string(impl_->capacity)};
  }
  // Block entries as a frame's would be: a stable id per position (so the
  // slack layout keeps slots from sample to sample) and the text's hash.
  std::vector<BlockTokenizer::Entry> entries;
  for (size_t b = 0; b < sample.blocks.size(); ++b) {
    const auto& tokens = sample.blocks[b];
    entries.push_back({XXH3_64bits(&b, sizeof b), XXH3_64bits(tokens.data(), tokens.size() * sizeof(TokenId)), &tokens});
  }
  impl_->context->finish({});  // forget the previous sample's query tokens, if any
  if (auto status = impl_->context->prepare({&sample.prefix, &entries}, report); !status.ok()) return status.error();
  return &impl_->context->cache();
}

}  // namespace kvframe::runtime
