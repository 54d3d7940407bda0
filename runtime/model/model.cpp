// The decoder's forward pass (Model::Impl is in model_impl.h; shapes as there).
#include "kvframe/runtime/model.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "device.h"
#include "model_impl.h"
#include "weights.h"

namespace kvframe::runtime {

// Causal attention of the n new queries (entries start .. start+n-1) over the
// cached keys of one layer, in chunks of query rows so the score matrix stays
// small at 8K-token prefills and each chunk reads only the keys it can see.
// padding: undefined, or bool [start] masking the cache's earlier entries.
at::Tensor Model::Impl::attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                  int64_t start, const at::Tensor& padding) const {
  constexpr int64_t kQueryChunk = 512;
  const int64_t n = q.size(0);
  if (n <= kQueryChunk) return attention_chunk(q, keys, values, padding);
  std::vector<at::Tensor> parts;
  for (int64_t i = 0; i < n; i += kQueryChunk) {
    const int64_t rows = std::min(kQueryChunk, n - i), visible = start + i + rows;
    parts.push_back(
        attention_chunk(q.narrow(0, i, rows), keys.narrow(1, 0, visible), values.narrow(1, 0, visible), padding));
  }
  return at::cat(parts);
}

// n queries over L keys, the last n of which are the queries' own entries;
// padding (if defined) masks the leading padding.size(0) keys.
at::Tensor Model::Impl::attention_chunk(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                        const at::Tensor& padding) const {
  const int64_t n = q.size(0), H = config.n_head, KH = config.n_head_kv, G = H / KH;
  const int64_t d = config.head_dim, L = keys.size(1);
  // Query head h reads key/value head h / G: group the G heads of each KV head
  // so one batched matmul per KV head covers them without copying K or V.
  at::Tensor qg = q.reshape({n, KH, G, d}).permute({1, 2, 0, 3}).reshape({KH, G * n, d});
  // Query i (entry L - n + i) sees keys 0 .. L - n + i: only the last n keys
  // (the diagonal block) can be in a query's future, so the causal mask is
  // applied there alone, in place; scaling q instead of the scores saves
  // another pass over the [KH, G n, L] scores (each pass measured as slow as
  // the matmul on CPU at 8K tokens). A padded cache costs one more pass, over
  // its earlier entries only.
  at::Tensor scores = at::matmul(qg * (1.0 / std::sqrt(static_cast<double>(d))), keys.transpose(1, 2));
  if (n > 1) {
    const auto on_device = at::TensorOptions(at::kLong).device(device);
    at::Tensor rows = at::arange(0, n, on_device);
    at::Tensor future = rows.unsqueeze(0) > rows.unsqueeze(1);  // [n, n], broadcast over KH and G
    scores.view({KH, G, n, L}).narrow(3, L - n, n).masked_fill_(future, -INFINITY);
  }
  if (padding.defined()) scores.narrow(2, 0, padding.size(0)).masked_fill_(padding, -INFINITY);
  at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(dtype);  // softmax in fp32 whatever the dtype
  at::Tensor out = at::matmul(probs, values);  // [KH, G n, d]
  return out.view({KH, G, n, d}).permute({2, 0, 1, 3}).reshape({n, H * d});
}

at::Tensor Model::Impl::layer(const LayerWeights& w, at::Tensor x, KvCache& cache, int64_t l,
                              const Rope::Table& rope_table, const at::Tensor& padding) const {
  const int64_t n = x.size(0), start = cache.length;
  const int64_t H = config.n_head, KH = config.n_head_kv, d = config.head_dim;

  at::Tensor qkv = at::linear(rms_norm(x, w.attn_norm), w.wqkv, w.bqkv);
  at::Tensor q = Rope::apply(qkv.narrow(1, 0, H * d).view({n, H, d}), rope_table);
  at::Tensor k = Rope::apply(qkv.narrow(1, H * d, KH * d).view({n, KH, d}), rope_table);
  at::Tensor v = qkv.narrow(1, (H + KH) * d, KH * d).view({n, KH, d});
  cache.k[l].narrow(1, start, n).copy_(k.transpose(0, 1));
  cache.v[l].narrow(1, start, n).copy_(v.transpose(0, 1));
  at::Tensor keys = cache.k[l].narrow(1, 0, start + n);
  at::Tensor values = cache.v[l].narrow(1, 0, start + n);
  x = x + at::linear(attention(q, keys, values, start, padding), w.wo);
  return feed_forward(w, x);
}

Status Model::Impl::check_padding(const KvCache& cache) const {
  const at::Tensor& p = cache.padding;
  if (!p.defined()) return std::nullopt;
  // The cache's tensors name their device fully ("cuda:0"), the model's may not ("cuda").
  const at::Device cache_device = cache.k.empty() ? device : cache.k.front().device();
  if (p.scalar_type() != at::kBool || p.dim() != 1 || p.size(0) != cache.capacity || p.device() != cache_device) {
    return Error{ErrorCode::kInvalidArgument,
                 "KvCache::padding must be undefined or a bool tensor [capacity = " + std::to_string(cache.capacity) +
                     "] on the cache's device " + cache_device.str() + "; got " + std::string(p.toString()) +
                     " of shape " + c10::str(p.sizes()) + " on " + p.device().str()};
  }
  return std::nullopt;
}

Error backend_error(const c10::Error& e, const std::string& doing) {
  return {ErrorCode::kBackend, "libtorch failed while " + doing + ": " + e.what_without_backtrace() +
                                   " — free memory, or use a smaller context, dtype or device"};
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const ModelConfig& Model::config() const { return impl_->config; }
const Rope& Model::rope() const { return impl_->rope; }
at::Device Model::device() const { return impl_->device; }
at::ScalarType Model::dtype() const { return impl_->dtype; }

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const ModelParams& params) {
  auto file = GgufFile::open(path);
  if (!file) return file.error();
  return load(*file, params);
}

Result<std::unique_ptr<Model>> Model::load(const GgufFile& file, const ModelParams& params) {
  auto device = parse_device(params.device);
  if (!device) return device.error();
  auto dtype = parse_dtype(params.dtype, *device);
  if (!dtype) return dtype.error();

  auto config = read_model_config(file);
  if (!config) return config.error();
  // llama3 RoPE scaling travels as a tensor of per-frequency divisors.
  if (const GgufTensorInfo* factors = file.find_tensor("rope_freqs.weight")) {
    if (factors->type != GgmlType::kF32 || factors->n_elements() != config->head_dim / 2) {
      return Error{ErrorCode::kShapeMismatch, "tensor 'rope_freqs.weight' must be F32 with head_dim / 2 = " +
                                                  std::to_string(config->head_dim / 2) + " values"};
    }
    config->rope.freq_factors.resize(static_cast<size_t>(factors->n_elements()));
    std::memcpy(config->rope.freq_factors.data(), factors->data, factors->nbytes);  // data may be unaligned
  }

  try {
    c10::InferenceMode inference;  // no autograd bookkeeping
    auto weights = load_weights(file, *config, *device, *dtype, params.on_progress);
    if (!weights) return weights.error();
    auto impl = std::make_unique<Impl>(
        Impl{*config, std::move(weights).value(), Rope(config->rope), *device, *dtype});
    return std::unique_ptr<Model>(new Model(std::move(impl)));
  } catch (const c10::Error& e) {
    return backend_error(e, "loading the weights");
  }
}

Result<std::unique_ptr<Model>> Model::with_random_weights(const ModelConfig& config, const ModelParams& params,
                                                          uint64_t seed) {
  auto device = parse_device(params.device);
  if (!device) return device.error();
  const ModelConfig& c = config;
  if (c.n_layer <= 0 || c.n_embd <= 0 || c.n_head <= 0 || c.n_head_kv <= 0 || c.n_head % c.n_head_kv != 0 ||
      c.head_dim <= 0 || c.head_dim % 2 != 0 || c.n_ff <= 0 || c.n_vocab <= 0 || c.rope.head_dim != c.head_dim) {
    return Error{ErrorCode::kInvalidArgument, "inconsistent model shape for with_random_weights()"};
  }
  auto dtype = parse_dtype(params.dtype, *device);
  if (!dtype) return dtype.error();
  try {
    c10::InferenceMode inference;
    auto impl = std::make_unique<Impl>(Impl{c, random_weights(c, *device, *dtype, seed), Rope(c.rope), *device, *dtype});
    return std::unique_ptr<Model>(new Model(std::move(impl)));
  } catch (const c10::Error& e) {
    return backend_error(e, "making the weights");
  }
}

Result<KvCache> Model::new_cache(int64_t capacity) const {
  if (capacity < 1) return Error{ErrorCode::kInvalidArgument, "a KV cache needs a capacity of at least 1 token"};
  const ModelConfig& c = impl_->config;
  KvCache cache;
  cache.capacity = capacity;
  const auto options = at::TensorOptions(impl_->dtype).device(impl_->device);
  try {
    for (int64_t l = 0; l < c.n_layer; ++l) {
      cache.k.push_back(at::empty({c.n_head_kv, capacity, c.head_dim}, options));
      cache.v.push_back(at::empty({c.n_head_kv, capacity, c.head_dim}, options));
    }
  } catch (const c10::Error& e) {
    return backend_error(e, "allocating a " + std::to_string(capacity) + "-token KV cache");
  }
  return cache;
}

Result<at::Tensor> Model::forward(const at::Tensor& tokens, KvCache& cache, bool all_logits) const {
  try {
    return impl_->forward(tokens, cache, all_logits);
  } catch (const c10::Error& e) {
    return backend_error(e, "running the model (the cache is unchanged)");
  }
}

Result<at::Tensor> Model::Impl::forward(const at::Tensor& tokens, KvCache& cache, bool all_logits) const {
  const Impl& m = *this;
  const int64_t n = tokens.numel();
  if (n == 0) return Error{ErrorCode::kInvalidArgument, "forward() needs at least one token"};
  if (cache.length + n > cache.capacity) {
    return Error{ErrorCode::kContextFull, "the KV cache holds " + std::to_string(cache.capacity) +
                                              " tokens; " + std::to_string(cache.length) + " + " +
                                              std::to_string(n) + " do not fit — allocate a larger cache"};
  }
  if (auto bad = m.check_padding(cache)) return *bad;
  c10::InferenceMode inference;  // no autograd bookkeeping
  at::Tensor ids = tokens.to(at::kLong).reshape({n});
  if (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= m.config.n_vocab) {
    return Error{ErrorCode::kInvalidArgument, "token ids must lie in [0, " +
                                                  std::to_string(m.config.n_vocab) + ")"};
  }
  ids = ids.to(m.device);

  // Positions follow next_position, not the entry index: an assembled cache
  // may hold slack entries (masked by padding) that take no position.
  const auto on_device = at::TensorOptions(at::kLong).device(m.device);
  const Rope::Table rope_table = m.rope.table(at::arange(cache.next_position, cache.next_position + n, on_device));
  // Only the entries cached before this call can be masked: the new tokens'
  // own entries are always visible (and unmasked below for later calls).
  at::Tensor padding;
  if (cache.padding.defined() && cache.length > 0) padding = cache.padding.narrow(0, 0, cache.length);
  at::Tensor x = m.weights.embed.index_select(0, ids);
  for (int64_t l = 0; l < m.config.n_layer; ++l) {
    x = m.layer(m.weights.layers[l], x, cache, l, rope_table, padding);
  }
  if (cache.padding.defined()) cache.padding.narrow(0, cache.length, n).fill_(false);
  cache.length += n;
  cache.next_position += n;

  if (!all_logits) x = x.narrow(0, n - 1, 1);
  return at::linear(m.rms_norm(x, m.weights.output_norm), m.weights.output).to(at::kFloat);
}

}  // namespace kvframe::runtime
