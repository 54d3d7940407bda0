// forward(), forward_sequences() and encode_blocks(): each builds one Batch
// for Model::decode (decode.cpp) and keeps the contract and error codes it
// had before the batch entry point.
#include <string>
#include <vector>

#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

Result<at::Tensor> logits_of(Result<Decoded> decoded) {
  if (!decoded) return decoded.error();
  return std::move(decoded->logits);
}

}  // namespace

Result<at::Tensor> Model::forward(const at::Tensor& tokens, KvCache& cache, bool all_logits, PromptPart part) const {
  try {
    const int64_t n = tokens.numel();
    if (n == 0) return Error{ErrorCode::kInvalidArgument, "forward() needs at least one token"};
    // On the host: the step path reads them there, and the check costs no device sync.
    const at::Tensor ids = tokens.to(at::kCPU, at::kLong).reshape({n}).contiguous();
    Batch batch;
    batch.tokens.assign(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + n);
    if (all_logits) batch.logits.assign(static_cast<size_t>(n), 1);
    batch.caches = {&cache};
    batch.part = part;
    return logits_of(decode(batch));
  } catch (const c10::Error& e) {  // decode() catches its own: this is the tokens' copy to the host
    return backend_error(e, "reading the tokens (the cache is unchanged)");
  }
}

Result<at::Tensor> Model::forward_sequences(const std::vector<SequenceStep>& steps) const {
  if (steps.empty()) return Error{ErrorCode::kInvalidArgument, "forward_sequences() needs at least one sequence"};
  Batch batch;
  for (size_t s = 0; s < steps.size(); ++s) {
    batch.tokens.insert(batch.tokens.end(), steps[s].tokens.begin(), steps[s].tokens.end());
    batch.sequence.resize(batch.tokens.size(), static_cast<int32_t>(s));
    batch.caches.push_back(steps[s].cache);
  }
  return logits_of(decode(batch));
}

Result<std::vector<BlockKv>> Model::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                  const KvCache* context) const {
  Batch batch;
  batch.attention = Batch::Attention::kBlocks;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].empty()) return Error{ErrorCode::kInvalidArgument, "block " + std::to_string(b) + " has no tokens"};
    batch.tokens.insert(batch.tokens.end(), blocks[b].begin(), blocks[b].end());
    batch.sequence.resize(batch.tokens.size(), static_cast<int32_t>(b));
  }
  if (blocks.empty()) return std::vector<BlockKv>{};
  batch.logits.assign(batch.tokens.size(), 0);
  batch.context = context;
  batch.keep_kv = true;
  batch.part = PromptPart::kContext;
  auto decoded = decode(batch);
  if (!decoded) return decoded.error();
  return std::move(decoded->blocks);
}

}  // namespace kvframe::runtime
