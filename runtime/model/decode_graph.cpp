// Decoding steps replayed from CUDA graphs (see decode_graph.h).
#include "decode_graph.h"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <vector>

#include "fused_attention.h"

#ifdef KVFRAME_TORCH_CUDA_GRAPHS
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace kvframe::runtime {

#ifdef KVFRAME_TORCH_CUDA_GRAPHS

namespace {

// Graphs kept at once (each holds its cache's buffers until that cache is gone).
constexpr size_t kMaxGraphs = 8;
// Steps of more tokens run eagerly: their launches are a small share of their work.
constexpr int64_t kMaxGraphTokens = 128;
// A step of several tokens (a query's final block) reads the entries before
// it as a fixed prefix of a multiple of this and the rest as a ragged row
// (fused_step_attention): its graph serves the lengths of one such window.
constexpr int64_t kPrefixStride = 512;
// Keys of several-token steps seen once (captured when seen again).
constexpr size_t kMaxSeen = 32;

// What a graph is made for: a cache's buffers, the tokens per step, the
// prefix it reads whole, whether it returns every token's logits, and what
// else the pass reads (the adapter).
struct GraphKey {
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t capacity = 0, n = 0, prefix = 0;
  bool all_logits = false;
  const void* weights = nullptr;
  bool operator==(const GraphKey& o) const {
    return k == o.k && v == o.v && capacity == o.capacity && n == o.n && prefix == o.prefix &&
           all_logits == o.all_logits && weights == o.weights;
  }
};

// One cache's captured step and the device tensors it reads and writes.
struct Graph {
  GraphKey key;
  at::Tensor k0, v0;  // views of the cache's buffers: they stay allocated while the graph may write them
  std::shared_ptr<const void> weights;  // held: the graph reads its tensors
  at::Tensor ids;                // int64 [n]: the tokens
  at::Tensor position, entry;    // int64 [1]: the first token's RoPE position and entry
  StepKeys keys;                 // the entries attention reads (keys.used: int32 [1])
  at::Tensor logits;             // the output, in the graph's memory pool
  at::cuda::CUDAGraph graph;
};

// The step's attention plan: the tokens' keys (rotated) and values written
// at `entries`, then the tokens over every entry up to their own.
class StepPlan final : public AttentionPlan {
 public:
  StepPlan(KvCache& cache, const Graph& g, Rope::Table table, at::Tensor entries)
      : cache_(cache), g_(g), table_(std::move(table)), entries_(std::move(entries)) {}

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) override {
    cache_.k[l].index_copy_(1, entries_, Rope::apply(k, table_).transpose(0, 1));
    cache_.v[l].index_copy_(1, entries_, v.transpose(0, 1));
    return fused_step_attention(q, cache_.k[l], cache_.v[l], g_.keys);
  }

 private:
  KvCache& cache_;
  const Graph& g_;
  Rope::Table table_;
  at::Tensor entries_;
};

}  // namespace

struct DecodeGraphs::Impl {
  at::Device device;
  at::ScalarType dtype;
  at::Tensor inv_freq;  // [head_dim / 2] fp32 on the device: RoPE's table is made inside the graph
  std::mutex mutex;
  std::vector<std::unique_ptr<Graph>> graphs;  // least recently used first
  std::vector<GraphKey> seen;                  // several-token steps seen once, oldest first
  bool failed = false;

  Impl(at::Device d, at::ScalarType t, const Rope& rope)
      : device(d), dtype(t), inv_freq(rope.inv_freq().to(d, at::kFloat)) {}

  // The step's inputs, written on the current stream (no host sync).
  void set_inputs(Graph& g, const int64_t* ids, const KvCache& cache) const {
    const int64_t n = g.key.n;
    if (n == 1) {
      g.ids.fill_(ids[0]);
    } else {
      g.ids.copy_(at::from_blob(const_cast<int64_t*>(ids), {n}, at::kLong), /*non_blocking=*/false);
    }
    g.position.fill_(cache.next_position);
    g.entry.fill_(cache.length);
    g.keys.used.fill_(cache.length + n - g.key.prefix);
  }

  at::Tensor run(Graph& g, KvCache& cache, const Forward& forward) const {
    const auto longs = at::TensorOptions(at::kLong).device(device);
    const at::Tensor offsets = at::arange(g.key.n, longs);
    // Rope::table's arithmetic, on the positions the graph reads.
    const at::Tensor angles = (g.position + offsets).to(at::kFloat).unsqueeze(1) * inv_freq.unsqueeze(0);
    const Rope::Table table{angles.cos().to(dtype), angles.sin().to(dtype)};
    StepPlan plan(cache, g, table, g.entry + offsets);
    return forward(g.ids, table, plan);
  }

  std::unique_ptr<Graph> make(const GraphKey& key, const KvCache& cache, std::shared_ptr<const void> weights) const {
    auto g = std::make_unique<Graph>();
    const auto on = [&](at::ScalarType t) { return at::TensorOptions(t).device(device); };
    g->key = key;
    g->k0 = cache.k[0];
    g->v0 = cache.v[0];
    g->weights = std::move(weights);
    g->ids = at::zeros({key.n}, on(at::kLong));
    g->position = at::zeros({1}, on(at::kLong));
    g->entry = at::zeros({1}, on(at::kLong));
    g->keys.prefix = key.prefix;
    g->keys.used = at::zeros({1}, on(at::kInt));
    g->keys.cu_q = at::tensor({0, static_cast<int32_t>(key.n)}, on(at::kInt));
    g->keys.cu_k = at::tensor({0, static_cast<int32_t>(cache.capacity - key.prefix)}, on(at::kInt));
    return g;
  }

  // Whether a several-token step's key was seen before (and remembers it if not).
  bool seen_before(const GraphKey& key) {
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return true;
    if (seen.size() == kMaxSeen) seen.erase(seen.begin());
    seen.push_back(key);
    return false;
  }

  // The first step into a cache: run eagerly on a side stream (its result is
  // this step's), then captured there. False when the capture failed.
  bool capture(Graph& g, KvCache& cache, const Forward& forward, at::Tensor& logits) const {
    const at::cuda::CUDAStream current = at::cuda::getCurrentCUDAStream(device.index());
    const at::cuda::CUDAStream side = at::cuda::getStreamFromPool(false, device.index());
    at::cuda::CUDAEvent ready, done;
    ready.record(current);
    ready.block(side);
    bool captured = false;
    {
      const at::cuda::CUDAStreamGuard on_side(side);
      logits = run(g, cache, forward).clone();
      try {
        // Thread-local: a server's other threads may use the GPU meanwhile.
        g.graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        try {
          g.logits = run(g, cache, forward);
        } catch (...) {
          g.graph.capture_end();  // ends the capture (and its memory pool) before reporting
          throw;
        }
        g.graph.capture_end();
        captured = true;
      } catch (const c10::Error& e) {
        std::fprintf(stderr, "kvframe: capturing a decoding step in a CUDA graph failed, steps run eagerly: %s\n",
                     e.what_without_backtrace());
      }
    }
    done.record(side);
    done.block(current);
    return captured;
  }
};

DecodeGraphs::DecodeGraphs(at::Device device, at::ScalarType dtype, Rope rope)
    : impl_(std::make_unique<Impl>(device, dtype, rope)) {}
DecodeGraphs::~DecodeGraphs() = default;

bool DecodeGraphs::available(const at::Device& device, at::ScalarType dtype) {
  return device.is_cuda() && fused_support(device, dtype).step;
}

std::optional<at::Tensor> DecodeGraphs::step(const int64_t* ids, int64_t n, bool all_logits, KvCache& cache,
                                             std::shared_ptr<const void> weights_in_use, const Forward& forward) {
  Impl& s = *impl_;
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.failed || cache.padding.defined() || cache.k.empty() || n > kMaxGraphTokens) return std::nullopt;
  if (n > 1 && !fused_support(s.device, s.dtype).steps) return std::nullopt;
  const GraphKey key{cache.k[0].data_ptr(), cache.v[0].data_ptr(), cache.capacity,          n,
                     n == 1 ? 0 : cache.length / kPrefixStride * kPrefixStride,          all_logits,
                     weights_in_use.get()};
  // Graphs whose cache is gone (theirs are the last views of its buffers) go first.
  s.graphs.erase(std::remove_if(s.graphs.begin(), s.graphs.end(),
                                [](const std::unique_ptr<Graph>& g) { return g->k0.storage().use_count() == 1; }),
                 s.graphs.end());
  auto it = std::find_if(s.graphs.begin(), s.graphs.end(),
                         [&](const std::unique_ptr<Graph>& g) { return g->key == key; });
  if (it != s.graphs.end()) {
    std::rotate(it, it + 1, s.graphs.end());  // most recently used last
    Graph& g = *s.graphs.back();
    s.set_inputs(g, ids, cache);
    g.graph.replay();
    return g.logits.clone();
  }
  // A decoding step is followed by more of its kind: captured at once. A
  // query's final block recurs frame after frame: captured when it does.
  if (n > 1 && !s.seen_before(key)) return std::nullopt;
  auto g = s.make(key, cache, std::move(weights_in_use));
  s.set_inputs(*g, ids, cache);
  at::Tensor logits;
  if (!s.capture(*g, cache, forward, logits)) {
    s.failed = true;
    return logits;  // the eager warm-up's: this step is done either way
  }
  if (s.graphs.size() == kMaxGraphs) s.graphs.erase(s.graphs.begin());
  s.graphs.push_back(std::move(g));
  return logits;
}

#else  // no CUDA graphs in this build: every step runs eagerly

struct DecodeGraphs::Impl {};
DecodeGraphs::DecodeGraphs(at::Device, at::ScalarType, Rope) {}
DecodeGraphs::~DecodeGraphs() = default;
bool DecodeGraphs::available(const at::Device&, at::ScalarType) { return false; }
std::optional<at::Tensor> DecodeGraphs::step(const int64_t*, int64_t, bool, KvCache&, std::shared_ptr<const void>,
                                             const Forward&) {
  return std::nullopt;
}

#endif

}  // namespace kvframe::runtime
