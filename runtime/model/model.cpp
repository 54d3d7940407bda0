// Model: loading, KV caches, threads, and decode()'s kAppend batches — the
// forward pass (forward_pass.cpp) appending to KV caches, as prefills and
// decoding steps do.
#include "kvframe/runtime/model.h"

#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>
#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "cpu_attention.h"
#include "cpu_step.h"
#include "decode_graph.h"
#include "device.h"
#include "fused_attention.h"
#include "kvframe/runtime/free_cores.h"
#include "model_impl.h"
#include "weights.h"

namespace kvframe::runtime {
namespace {

// forward()'s plan: n new tokens appended to one sequence's cache. Each
// layer's keys (rotated) and values are written to entries length .. +n-1,
// and the tokens attend causally over every visible entry.
class CachePlan final : public AttentionPlan {
 public:
  CachePlan(const ModelConfig& config, KvCache& cache, FusedSupport fused)
      : config_(config), cache_(cache), fused_(fused) {
    // Only the entries cached before this call can be masked: the new tokens'
    // own entries are always visible.
    if (cache.padding.defined() && cache.length > 0) padding_ = cache.padding.narrow(0, 0, cache.length);
  }

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& k, const at::Tensor&,
                    const at::Tensor& v) override {
    const int64_t n = q.size(0), start = cache_.length;
    cache_.k[l].narrow(1, start, n).copy_(k.transpose(0, 1));
    cache_.v[l].narrow(1, start, n).copy_(v.transpose(0, 1));
    return attention(q, cache_.k[l].narrow(1, 0, start + n), cache_.v[l].narrow(1, 0, start + n), start,
                     config_.window(l));
  }

 private:
  // Causal attention of the n new queries (entries start .. start+n-1) over
  // the cached keys of one layer, in chunks of query rows so the score matrix
  // stays small at 8K-token prefills and each chunk reads only the keys it
  // can see. window > 0: each query sees only that many entries, its own
  // last (a cache with a window has no padding: entries are positions).
  at::Tensor attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, int64_t start,
                       int64_t window) const {
    constexpr int64_t kQueryChunk = 512;
    const int64_t n = q.size(0);
    if (window >= start + n) window = 0;  // the window reaches every entry
    // Unmasked attention on CUDA goes to torch's flash kernels (a decoding
    // step, a prefill, a query after cached blocks); masked shapes keep the path below.
    if (!padding_.defined() && window == 0 && (n == 1 || start == 0 ? fused_.cache : fused_.cache_after)) {
      return fused_cache_attention(q, keys, values, fused_.folded);
    }
    // On the CPU, one pass over the keys with the scores kept in cache; a
    // decoding step's few rows (off the step path) keep the path below.
    if (n * (q.size(1) / keys.size(0)) >= kCpuAttentionVectorRows && cpu_attention_runs(q)) {
      at::Tensor out = at::empty({n, q.size(1) * q.size(2)}, q.options());
      cpu_attention(q, {{0, n, keys, values}}, {}, {}, padding_, window, out);
      return out;
    }
    if (n <= kQueryChunk) return chunk(q, keys, values, window);
    std::vector<at::Tensor> parts;
    for (int64_t i = 0; i < n; i += kQueryChunk) {
      const int64_t rows = std::min(kQueryChunk, n - i), visible = start + i + rows;
      parts.push_back(chunk(q.narrow(0, i, rows), keys.narrow(1, 0, visible), values.narrow(1, 0, visible), window));
    }
    return at::cat(parts);
  }

  // n queries over L keys, the last n of which are the queries' own entries;
  // padding_ (if defined) masks the leading padding_.size(0) keys, and a
  // window > 0 the keys more than window - 1 entries before each query.
  at::Tensor chunk(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, int64_t window) const {
    const ModelConfig& c = config_;
    const int64_t n = q.size(0), H = c.n_head, KH = c.n_head_kv, G = H / KH, d = c.head_dim, L = keys.size(1);
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
      at::Tensor rows = at::arange(0, n, at::TensorOptions(at::kLong).device(q.device()));
      at::Tensor future = rows.unsqueeze(0) > rows.unsqueeze(1);  // [n, n], broadcast over KH and G
      scores.view({KH, G, n, L}).narrow(3, L - n, n).masked_fill_(future, -INFINITY);
    }
    if (padding_.defined()) scores.narrow(2, 0, padding_.size(0)).masked_fill_(padding_, -INFINITY);
    if (window > 0 && L > window) {
      const auto longs = at::TensorOptions(at::kLong).device(q.device());
      // Query i is entry L - n + i: keys up to entry L - n + i - window are out of its reach.
      at::Tensor reach = at::arange(L - n - window, L - window, longs).unsqueeze(1);  // [n, 1]
      at::Tensor behind = at::arange(0, L, longs).unsqueeze(0) <= reach;               // [n, L]
      scores.view({KH, G, n, L}).masked_fill_(behind, -INFINITY);
    }
    at::Tensor probs = at::softmax(scores, -1, at::kFloat).to(q.scalar_type());  // softmax in fp32 whatever the dtype
    at::Tensor out = at::matmul(probs, values);                          // [KH, G n, d]
    return out.view({KH, G, n, d}).permute({2, 0, 1, 3}).reshape({n, H * d});
  }

  const ModelConfig& config_;
  KvCache& cache_;
  FusedSupport fused_;
  at::Tensor padding_;
};

// Several sequences' tokens packed into one pass off the CPU step path, so
// the matmuls read the weights once for all of them; in attention each
// segment is a CachePlan over its own cache, which it alone reads and
// appends to.
class SequencesPlan final : public AttentionPlan {
 public:
  SequencesPlan(const ModelConfig& config, const std::vector<KvCache*>& caches, std::vector<int64_t> lengths,
                FusedSupport fused)
      : lengths_(std::move(lengths)) {
    plans_.reserve(caches.size());
    for (KvCache* cache : caches) plans_.emplace_back(config, *cache, fused);
  }

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& k, const at::Tensor& k_raw,
                    const at::Tensor& v) override {
    if (plans_.size() == 1) return plans_[0].attend(l, q, k, k_raw, v);
    std::vector<at::Tensor> out;
    int64_t first = 0;
    for (size_t s = 0; s < plans_.size(); ++s) {
      const int64_t n = lengths_[s];
      out.push_back(plans_[s].attend(l, q.narrow(0, first, n), k.narrow(0, first, n), k_raw.narrow(0, first, n),
                                     v.narrow(0, first, n)));
      first += n;
    }
    return at::cat(out);
  }

 private:
  std::vector<CachePlan> plans_;
  std::vector<int64_t> lengths_;
};

}  // namespace

void Model::Impl::use_fused_kernels(bool cuda_graphs) {
  fused_kernels = fused_support(device, dtype);
  // A graph's step attends over the whole cache at the global RoPE base.
  if (cuda_graphs && fused_kernels.step && config.sliding_window == 0) {
    graphs = std::make_shared<DecodeGraphs>(device, dtype, rope);
  }
}

Status Model::Impl::check_padding(const KvCache& cache) const {
  const at::Tensor& p = cache.padding;
  if (!p.defined()) return {};
  // The cache's tensors name their device fully ("cuda:0"), the model's may not ("cuda").
  const at::Device cache_device = cache.k.empty() ? device : cache.k.front().device();
  if (p.scalar_type() != at::kBool || p.dim() != 1 || p.size(0) != cache.capacity || p.device() != cache_device) {
    return Error{ErrorCode::kInvalidArgument,
                 "KvCache::padding must be undefined or a bool tensor [capacity = " + std::to_string(cache.capacity) +
                     "] on the cache's device " + cache_device.str() + "; got " + std::string(p.toString()) +
                     " of shape " + c10::str(p.sizes()) + " on " + p.device().str()};
  }
  return {};
}

Status Model::Impl::check_window(const KvCache& cache) const {
  if (config.sliding_window == 0 || !cache.padding.defined()) return {};
  return Error{ErrorCode::kUnsupportedArch, "a cache with padding (block attention's slack layout) on a model with "
                                            "sliding-window layers (" + config.arch + ") is not supported yet; use "
                                            "the compact layout"};
}

Error backend_error(const c10::Error& e, const std::string& doing) {
  return {ErrorCode::kBackend, "libtorch failed while " + doing + ": " + e.what_without_backtrace() +
                                   " — free memory, or use a smaller context, dtype or device"};
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const ModelConfig& Model::config() const { return impl_->config; }
const Rope& Model::rope() const { return impl_->rope; }
KvShape Model::kv_shape() const {
  return {impl_->config.n_layer, impl_->config.n_head_kv, impl_->config.head_dim, impl_->dtype, impl_->device};
}
at::Device Model::device() const { return impl_->device; }
at::ScalarType Model::dtype() const { return impl_->dtype; }

Result<std::unique_ptr<Model>> Model::load(const std::string& path, const ModelParams& params) {
  auto file = GgufFile::open(path);
  if (!file) return file.error();
  return load(*file, params);
}

namespace {

// Runs `make` on a thread of its own and returns what it made. Loading runs
// libtorch's parallel loops, which give the thread that runs them an OpenMP
// team of worker threads for the life of that thread. A server loads on its
// main thread and runs the model on another: the main thread's idle team
// then stays, and with more OpenMP threads than cores libgomp stops spinning
// between parallel regions, so every pass on the engine thread waits for the
// kernel to wake its workers. On 2 cores that made a Hold'em decision's
// encoding, final block and decoding 1.6-1.8x slower. A thread that ends
// takes its team with it.
// Whether the model's matrices stay as the file stores them (the CPU's
// kernels read them for every pass), or go to libtorch as dense tensors.
bool reads_as_stored(at::Device device, at::ScalarType dtype, const ModelParams& params) {
  return device.is_cpu() && params.step_kernels && (dtype == at::kFloat || dtype == at::kBFloat16);
}

Result<std::unique_ptr<Model>> made_on_own_thread(const std::function<Result<std::unique_ptr<Model>>()>& make) {
  Result<std::unique_ptr<Model>> out = Error{ErrorCode::kBackend, "the loading thread did not finish"};
  std::thread([&] {
    try {
      out = make();
    } catch (const std::exception& e) {  // an exception must not end the process from this thread
      out = Error{ErrorCode::kBackend, std::string("loading failed: ") + e.what()};
    }
  }).join();
  return out;
}

// Per-frequency RoPE divisors travel as tensors: llama3 scaling's
// rope_freqs, Phi-3's LongRoPE pair, of which the model rotates with the
// set read_phi3 chose; each one value per rotated pair, F32.
Status read_rope_factors(const GgufFile& file, ModelConfig& c) {
  const int64_t pairs = c.rope.rotated() / 2;
  const std::string taken = c.arch != "phi3" ? "rope_freqs.weight"
                            : c.long_rope    ? "rope_factors_long.weight"
                                             : "rope_factors_short.weight";
  // A file with short factors and no long ones cannot rotate past the
  // original length as it was trained to (llama.cpp would drop the factors).
  if (c.long_rope && !file.find_tensor(taken) && file.find_tensor("rope_factors_short.weight")) {
    return Error{ErrorCode::kMissingTensor,
                 "tensor '" + taken + "' is missing: the model is loaded for a context past its " +
                     std::to_string(c.rope_original_context) + " tokens (" + c.arch +
                     ".rope.scaling.original_context_length), which the long LongRoPE factors rotate; "
                     "load it for at most that many"};
  }
  for (const char* name : {"rope_freqs.weight", "rope_factors_short.weight", "rope_factors_long.weight"}) {
    const GgufTensorInfo* factors = file.find_tensor(name);
    if (!factors) continue;
    if (factors->type != GgmlType::kF32 || factors->n_elements() != pairs) {
      return Error{ErrorCode::kShapeMismatch, "tensor '" + std::string(name) + "' must be F32 with one value per " +
                                                  "rotated pair (" + std::to_string(pairs) + ")"};
    }
    if (name != taken) continue;
    c.rope.freq_factors.resize(static_cast<size_t>(pairs));
    std::memcpy(c.rope.freq_factors.data(), factors->data, factors->nbytes);  // data may be unaligned
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Model>> Model::load(const GgufFile& file, const ModelParams& params) {
  return made_on_own_thread([&] { return load_here(file, params); });
}

Result<std::unique_ptr<Model>> Model::load_here(const GgufFile& file, const ModelParams& params) {
  auto device = parse_device(params.device);
  if (!device) return device.error();
  auto dtype = parse_dtype(params.dtype, *device);
  if (!dtype) return dtype.error();

  auto config = read_model_config(file, params.context);
  if (!config) return config.error();
  if (Status factors = read_rope_factors(file, *config); !factors.ok()) return factors.error();

  try {
    // No autograd bookkeeping, but ordinary tensors (not InferenceMode's):
    // training passes read the weights under autograd.
    at::NoGradGuard no_grad;
    // On the CPU the file's blocks are the only copy of the matrices where
    // the kernels read them (quant_matrix.h); elsewhere libtorch's dense ones.
    std::optional<StepWeights> stored;
    if (reads_as_stored(*device, *dtype, params)) stored = load_step_weights(file, *config);
    if (stored && !params.int8_activations) stored->activations = QuantMatrix::Activations::kFp32;
    auto weights = load_weights(file, *config, *device, *dtype, stored ? Matrices::kAsStored : Matrices::kDense,
                                params.on_progress);
    if (!weights) return weights.error();
    auto impl = std::make_unique<Impl>(
        Impl{*config, std::move(weights).value(), Rope(config->rope), *device, *dtype, nullptr, 0, nullptr, {}, {},
             nullptr});
    if (stored) {
      set_step_biases(*stored, impl->weights);
      impl->step = std::make_shared<const StepWeights>(std::move(*stored));
    }
    impl->use_fused_kernels(params.cuda_graphs);
    impl->threads = params.threads;
    std::unique_ptr<Model> model(new Model(std::move(impl)));
    if (!params.lora.empty()) {
      auto adapter = LoraAdapter::load(params.lora, model->config(), *device);
      if (!adapter) return adapter.error();
      if (params.lora_merge) {
        if (Status merged = model->impl_->merge(**adapter); !merged.ok()) return merged.error();
      } else if (Status set = model->set_adapter(std::move(adapter).value()); !set.ok()) {
        return set.error();
      }
    }
    return model;
  } catch (const c10::Error& e) {
    return backend_error(e, "loading the weights");
  }
}

Result<std::unique_ptr<Model>> Model::with_random_weights(const ModelConfig& config, const ModelParams& params,
                                                          uint64_t seed) {
  return made_on_own_thread([&] { return random_here(config, params, seed); });
}

Result<std::unique_ptr<Model>> Model::random_here(const ModelConfig& config, const ModelParams& params,
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
    at::NoGradGuard no_grad;
    auto impl = std::make_unique<Impl>(
        Impl{c, random_weights(c, *device, *dtype, seed), Rope(c.rope), *device, *dtype, nullptr, 0, nullptr, {}, {},
             nullptr});
    if (reads_as_stored(*device, *dtype, params)) {
      if (auto step = step_weights_of(impl->weights, c)) {
        impl->step = std::make_shared<const StepWeights>(std::move(*step));
        drop_dense_matrices(impl->weights);
      }
    }
    impl->use_fused_kernels(params.cuda_graphs);
    impl->threads = params.threads;
    return std::unique_ptr<Model>(new Model(std::move(impl)));
  } catch (const c10::Error& e) {
    return backend_error(e, "making the weights");
  }
}

uint64_t Model::context_fingerprint() const { return context_fingerprint(impl_->adapter.get()); }

uint64_t Model::context_fingerprint(const LoraAdapter* applied) const {
  const ModelConfig& c = impl_->config;
  uint64_t adapter = impl_->merged_adapter;
  if (applied && applied->params().scope == LoraScope::kAll) adapter ^= applied->fingerprint();
  const std::string text = c.arch + "|" + c.name + "|" + std::to_string(c.n_layer) + "|" + std::to_string(c.n_embd) +
                           "|" + std::to_string(c.n_head) + "|" + std::to_string(c.n_head_kv) + "|" +
                           std::to_string(c.head_dim) + "|" + std::to_string(c.n_ff) + "|" +
                           std::to_string(c.n_vocab) + "|" + std::to_string(c.rope.freq_base) + (c.long_rope ? "|long" : "") + "|" +
                           std::string(c10::toString(impl_->dtype)) + "|" + std::to_string(adapter);
  return XXH3_64bits(text.data(), text.size());
}

const std::shared_ptr<LoraAdapter>& Model::adapter() const { return impl_->adapter; }

Status Model::set_adapter(std::shared_ptr<LoraAdapter> adapter) {
  if (adapter) {
    const LoraAdapter::Impl& a = LoraAccess::of(*adapter);
    const ModelConfig& c = impl_->config;
    if (a.arch != c.arch || a.n_layer != c.n_layer || a.n_head != c.n_head || a.n_head_kv != c.n_head_kv ||
        a.head_dim != c.head_dim || a.shapes[kFfnDown] != lora_target_shape(c, kFfnDown)) {
      return Error{ErrorCode::kInvalidArgument, "the LoRA adapter was made for a model of another shape"};
    }
    if (!a.parameters.empty() && a.parameters.front().device().type() != impl_->device.type()) {
      return Error{ErrorCode::kInvalidArgument, "the LoRA adapter lives on " + a.parameters.front().device().str() +
                                                    ", the model on " + impl_->device.str()};
    }
  }
  impl_->adapter = std::move(adapter);
  return {};
}

Status Model::Impl::merge(const LoraAdapter& merged) {
  if (merged.params().scope != LoraScope::kAll) {
    return Error{ErrorCode::kInvalidArgument,
                 "a LoRA adapter of scope 'query' changes the final block and answer only, so it cannot be merged "
                 "into the weights; load it without merging"};
  }
  at::NoGradGuard no_grad;
  const std::vector<LayerLora> fused = LoraAccess::of(merged).fuse(at::kFloat);
  // Matrices read as stored cannot take it: the passes add its pairs on the fly.
  auto add = [&](at::Tensor& weight, const FusedLora& lora) {
    if (lora.a.defined() && weight.defined()) {
      weight.copy_(weight.to(at::kFloat) + at::matmul(lora.b, lora.a).to(weight.device()));
    }
  };
  for (size_t l = 0; l < weights.layers.size(); ++l) {
    LayerWeights& w = weights.layers[l];
    add(w.wqkv, fused[l].qkv);
    add(w.wo, fused[l].o);
    add(w.w_gate_up, fused[l].gate_up);
    add(w.w_down, fused[l].down);
  }
  merged_adapter ^= merged.fingerprint();
  if (step) merged_step_lora.push_back(LoraAccess::of(merged).fuse(at::kFloat));
  return {};
}

int Model::threads() const { return impl_->threads; }
void Model::set_threads(int threads) { impl_->threads = std::max(0, threads); }

void Model::Impl::use_threads() const {
  if (!device.is_cpu()) return;
  if (threads > 0) {
    set_threads_of_this_thread(threads);
  } else {
    fit_threads_to_free_cores();
  }
}

Model::WeightsMemory Model::weights_memory() const {
  WeightsMemory out;
  auto tensor_bytes = [&](const at::Tensor& t) {
    if (t.defined()) out.dense_bytes += static_cast<int64_t>(t.nbytes());
  };
  const Weights& w = impl_->weights;
  tensor_bytes(w.embed);
  tensor_bytes(w.output_norm);
  if (!w.output.is_same(w.embed)) tensor_bytes(w.output);
  for (const LayerWeights& l : w.layers) {
    for (const at::Tensor* t : {&l.attn_norm, &l.wqkv, &l.bqkv, &l.wo, &l.ffn_norm, &l.w_gate_up, &l.w_down,
                                &l.q_norm, &l.k_norm, &l.post_attn_norm, &l.post_ffn_norm}) {
      tensor_bytes(*t);
    }
  }
  const std::string dtype = impl_->dtype == at::kBFloat16 ? "bf16" : c10::toString(impl_->dtype);
  if (const StepWeights* step = impl_->step.get()) {
    out.stored_bytes = step->output.bytes() + (step->untied_embed ? step->untied_embed->bytes() : 0);
    for (const StepWeights::Layer& l : step->layers) {
      out.stored_bytes += l.wqkv.bytes() + l.wo.bytes() + l.w_gate_up.bytes() + l.w_down.bytes();
    }
    const bool int8 = step->activations == QuantMatrix::Activations::kInt8;
    out.layout = std::string("as stored (") + QuantMatrix::best_kernel_name() + " steps, " +
                 (int8 ? (QuantMatrix::int8_vnni() ? "int8 activations (VNNI)" : "int8 activations") : "fp32 activations") +
                 ", " + dtype + " tiles)";
  } else {
    out.layout = "dense " + dtype;
  }
  return out;
}

Status Model::check_positions(int64_t positions, const std::string& what) const {
  const ModelConfig& c = impl_->config;
  // LongRoPE's short factors rotate positions up to their original context
  // only: past it the logits would be wrong, with no sign of it. Other
  // models run past their trained context, as llama.cpp lets them.
  const bool short_factors = !c.long_rope && c.rope_original_context > 0 && !c.rope.freq_factors.empty();
  if (!short_factors || positions <= c.rope_original_context) return {};
  const std::string n = std::to_string(positions), limit = std::to_string(c.rope_original_context);
  return Error{ErrorCode::kInvalidArgument,
               what + " passes the " + limit + " tokens this model's short LongRoPE factors hold (" + c.arch +
                   ".rope.scaling.original_context_length), past which positions would rotate wrong; load the "
                   "model for " + n + " tokens (ModelParams::context, --model-context " + n +
                   ") to rotate with its long factors, or use at most " + limit};
}

Result<KvCache> Model::new_cache(int64_t capacity) const {
  if (capacity < 1) return Error{ErrorCode::kInvalidArgument, "a KV cache needs a capacity of at least 1 token"};
  // A plain cache's entries are its positions, so refusing its capacity here
  // stops every run that starts from one (generate(), causal sessions, a
  // caller's own prefill and decode) before any work.
  if (auto fits = check_positions(capacity, "a KV cache of " + std::to_string(capacity) + " tokens"); !fits.ok()) {
    return fits.error();
  }
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

at::Tensor Model::Impl::decode_append(const Batch& batch, const Grouped& g) const {
  c10::InferenceMode inference;  // no autograd bookkeeping
  const auto sequences = g.n.size();
  const auto total = static_cast<int64_t>(g.ids.size());
  const bool adapted = adapts(batch.part);
  // The CPU step kernels take short runs (one sequence's, or several
  // sequences' that are short in all): weights read once, no libtorch dispatch.
  bool steps_here = sequences == 1 || total <= kSequenceStepTokens;
  for (size_t s = 0; s < sequences; ++s) steps_here = steps_here && steps_on_cpu(*batch.caches[s], g.n[s]);
  at::Tensor logits;
  std::optional<at::Tensor> replayed;
  KvCache& first_cache = *batch.caches[0];
  if (steps_here) {
    std::vector<StepSegment> segments;
    for (size_t s = 0; s < sequences; ++s) segments.push_back({batch.caches[s], g.first[s], g.n[s]});
    logits = step_on_cpu(g.ids.data(), segments, g.kept, adapted);
  } else if (total == 1 && g.kept.size() == 1 && graphs &&
             (replayed = graphs->step(g.ids[0], first_cache, adapted ? adapter : nullptr,
                                      [&](const at::Tensor& step_ids, const Rope::Table& table, AttentionPlan& plan) {
                                        return head(run(step_ids, table, plan, adapted));
                                      }))) {
    logits = std::move(*replayed);  // a lone decoding step on CUDA, from its captured graph
  } else {
    // Positions follow each cache's next_position, not its entry index: an
    // assembled cache may hold slack entries (masked by padding) that take
    // no position.
    std::vector<int64_t> positions;
    positions.reserve(static_cast<size_t>(total));
    for (size_t s = 0; s < sequences; ++s) {
      for (int64_t t = 0; t < g.n[s]; ++t) positions.push_back(batch.caches[s]->next_position + t);
    }
    const Rope::Table rope_table = rope.table(id_tensor(positions, device), dtype);
    SequencesPlan plan(config, batch.caches, g.n, fused_kernels);
    const at::Tensor x = run(id_tensor(g.ids, device), rope_table, plan, adapted);
    const bool every_row = static_cast<int64_t>(g.kept.size()) == total &&
                           std::is_sorted(g.kept.begin(), g.kept.end());
    logits = head(every_row ? x : x.index_select(0, id_tensor(g.kept, device)));
  }
  for (size_t s = 0; s < sequences; ++s) {
    KvCache& cache = *batch.caches[s];
    if (cache.padding.defined()) cache.padding.narrow(0, cache.length, g.n[s]).fill_(false);
    cache.length += g.n[s];
    cache.next_position += g.n[s];
  }
  return logits;
}

}  // namespace kvframe::runtime
