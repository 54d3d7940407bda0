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

// One cache's captured step and the device tensors it reads and writes.
struct Graph {
  at::Tensor k0, v0;  // views of the cache's buffers: they stay allocated while the graph may write them
  int64_t capacity = 0;
  std::shared_ptr<const void> weights;  // held: the graph reads its tensors
  at::Tensor ids, position;     // int64 [1]: the token and its RoPE position
  at::Tensor entry, used;       // int64 [1]: where its K and V go; int32 [1]: entries attention reads
  at::Tensor cu_q, cu_k;        // int32 {0, 1}, {0, capacity}
  at::Tensor logits;            // the output, in the graph's memory pool
  at::cuda::CUDAGraph graph;

  bool serves(const KvCache& cache, const std::shared_ptr<const void>& in_use) const {
    return k0.data_ptr() == cache.k[0].data_ptr() && v0.data_ptr() == cache.v[0].data_ptr() &&
           capacity == cache.capacity && weights == in_use;
  }
};

// The step's attention plan: the token's key (rotated) and value written at
// `entry`, then one query over the first `used` entries.
class StepPlan final : public AttentionPlan {
 public:
  StepPlan(KvCache& cache, const Graph& g) : cache_(cache), g_(g) {}

  at::Tensor attend(int64_t l, const at::Tensor& q, const at::Tensor& k, const at::Tensor&,
                    const at::Tensor& v) override {
    cache_.k[l].index_copy_(1, g_.entry, k.transpose(0, 1));
    cache_.v[l].index_copy_(1, g_.entry, v.transpose(0, 1));
    return fused_step_attention(q, cache_.k[l], cache_.v[l], g_.used, g_.cu_q, g_.cu_k);
  }

 private:
  KvCache& cache_;
  const Graph& g_;
};

}  // namespace

struct DecodeGraphs::Impl {
  at::Device device;
  at::ScalarType dtype;
  at::Tensor inv_freq;  // [head_dim / 2] fp32 on the device: RoPE's table is made inside the graph
  std::mutex mutex;
  std::vector<std::unique_ptr<Graph>> graphs;  // least recently used first
  bool failed = false;

  Impl(at::Device d, at::ScalarType t, const Rope& rope)
      : device(d), dtype(t), inv_freq(rope.inv_freq().to(d, at::kFloat)) {}

  // The step's inputs, written on the current stream (kernels, no copies from the host).
  static void set_inputs(Graph& g, int64_t id, const KvCache& cache) {
    g.ids.fill_(id);
    g.position.fill_(cache.next_position);
    g.entry.fill_(cache.length);
    g.used.fill_(cache.length + 1);
  }

  at::Tensor run(Graph& g, KvCache& cache, const Forward& forward) const {
    const Rope::Table table = Rope::table(g.position, inv_freq, dtype);  // the position the graph reads
    StepPlan plan(cache, g);
    return forward(g.ids, table, plan);
  }

  std::unique_ptr<Graph> make(const KvCache& cache, std::shared_ptr<const void> weights) const {
    auto g = std::make_unique<Graph>();
    const auto on = [&](at::ScalarType t) { return at::TensorOptions(t).device(device); };
    g->k0 = cache.k[0];
    g->v0 = cache.v[0];
    g->capacity = cache.capacity;
    g->weights = std::move(weights);
    g->ids = at::zeros({1}, on(at::kLong));
    g->position = at::zeros({1}, on(at::kLong));
    g->entry = at::zeros({1}, on(at::kLong));
    g->used = at::zeros({1}, on(at::kInt));
    g->cu_q = at::tensor({0, 1}, on(at::kInt));
    g->cu_k = at::tensor({0, static_cast<int32_t>(cache.capacity)}, on(at::kInt));
    return g;
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

std::optional<at::Tensor> DecodeGraphs::step(int64_t id, KvCache& cache, std::shared_ptr<const void> weights_in_use,
                                             const Forward& forward) {
  Impl& s = *impl_;
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (s.failed || cache.padding.defined() || cache.k.empty()) return std::nullopt;
  // Graphs whose cache is gone (theirs are the last views of its buffers) go first.
  s.graphs.erase(std::remove_if(s.graphs.begin(), s.graphs.end(),
                                [](const std::unique_ptr<Graph>& g) { return g->k0.storage().use_count() == 1; }),
                 s.graphs.end());
  auto it = std::find_if(s.graphs.begin(), s.graphs.end(),
                         [&](const std::unique_ptr<Graph>& g) { return g->serves(cache, weights_in_use); });
  if (it != s.graphs.end()) {
    std::rotate(it, it + 1, s.graphs.end());  // most recently used last
    Graph& g = *s.graphs.back();
    s.set_inputs(g, id, cache);
    g.graph.replay();
    return g.logits.clone();
  }
  auto g = s.make(cache, std::move(weights_in_use));
  s.set_inputs(*g, id, cache);
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
std::optional<at::Tensor> DecodeGraphs::step(int64_t, KvCache&, std::shared_ptr<const void>, const Forward&) {
  return std::nullopt;
}

#endif

}  // namespace kvframe::runtime
