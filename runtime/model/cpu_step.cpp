// The CPU step path (cpu_step.h), read top to bottom as forward_pass.cpp is:
//
//   x = embed(ids)
//   per layer:  q, k, v = Wqkv · rms(x)        (+ adapter); k, v to the cache
//               x += Wo · attention(rope(q), cache)
//               x += Wdown · (silu(Wgate · rms(x)) * Wup · rms(x))
//   logits = Woutput · rms(x)
//
// Activations stay fp32 throughout; the cache keeps the model's dtype.
#include "cpu_step.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kvframe/runtime/free_cores.h"
#include "lora_impl.h"
#include "model_impl.h"

namespace kvframe::runtime {
namespace {

std::optional<QuantMatrix> matrix(const GgufFile& file, const std::string& name,
                                  const std::vector<int64_t>& order = {}) {
  const GgufTensorInfo* info = file.find_tensor(name);
  if (!info) return std::nullopt;
  auto m = QuantMatrix::from_tensor(*info);
  if (m && !order.empty()) return m->reorder_rows(order);
  return m;
}

// The row order unpermute_rope_rows gives a [n_heads * head_dim] tensor.
std::vector<int64_t> rope_row_order(int64_t n_heads, int64_t head_dim) {
  at::Tensor order = unpermute_rope_rows(at::arange(n_heads * head_dim, at::kLong), n_heads, head_dim);
  return {order.data_ptr<int64_t>(), order.data_ptr<int64_t>() + order.numel()};
}

// Qwen2's Q|K|V bias as fp32 (empty without one): libtorch's, so already in
// rope.h's row order (and rounded as the compute dtype rounds it).
std::vector<float> fp32_bias(const LayerWeights& layer) {
  if (!layer.bqkv.defined()) return {};
  at::Tensor b = layer.bqkv.to(at::kCPU, at::kFloat).contiguous();
  return {b.data_ptr<float>(), b.data_ptr<float>() + b.numel()};
}

// What the step path's loops assume: row lengths in whole 32-element blocks,
// fixed-size buffers for a head and for the query heads of one key head.
bool step_shape_supported(const ModelConfig& c) {
  return c.head_dim <= 512 && c.n_head / c.n_head_kv <= 8 && c.n_embd % QuantMatrix::kBlock == 0 &&
         c.n_ff % QuantMatrix::kBlock == 0 && c.n_head * c.head_dim % QuantMatrix::kBlock == 0;
}

// A weight [rows, cols] of the compute dtype, copied as F32 or BF16 rows.
QuantMatrix copy_of(const at::Tensor& weight) {
  at::Tensor values = weight.to(at::kCPU, at::kFloat).contiguous();
  const BlockFormat format = weight.scalar_type() == at::kBFloat16 ? BlockFormat::kBF16 : BlockFormat::kF32;
  return QuantMatrix::of_floats(values.data_ptr<float>(), values.size(0), values.size(1), format);
}

// Buffers of one step, reused across steps of the same thread.
struct Scratch {
  std::vector<float> x, normed, qkv, attended, out, gate_up, act, rank, cos, sin, partials;
  static Scratch& of_this_thread() {
    thread_local Scratch s;
    return s;
  }
};

float* sized(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// out = rms(x) * weight, per row of n.
void rms_norm_rows(const float* x, const float* weight, int64_t n, int64_t dim, double eps, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    const float* xi = x + i * dim;
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < dim; ++j) squares += xi[j] * xi[j];
    const float scale = 1.0f / std::sqrt(squares / static_cast<float>(dim) + static_cast<float>(eps));
    for (int64_t j = 0; j < dim; ++j) out[i * dim + j] = xi[j] * scale * weight[j];
  }
}

// y [n, out] += (x [n, in] A^T) B^T: an adapter's update of one projection,
// in fp32. A [rank, in], B [out, rank] (the scale folded in, lora_impl.h).
void add_lora(const FusedLora& lora, const float* x, int64_t n, float* y, std::vector<float>& rank_buffer) {
  if (!lora.a.defined()) return;
  const int64_t rank = lora.a.size(0), in = lora.a.size(1), out = lora.b.size(0);
  const float* a = lora.a.data_ptr<float>();
  const float* b = lora.b.data_ptr<float>();
  float* t = sized(rank_buffer, n * rank);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t r = 0; r < rank; ++r) {
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < in; ++c) sum += a[r * in + c] * x[i * in + c];
      t[i * rank + r] = sum;
    }
    for (int64_t o = 0; o < out; ++o) {
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t r = 0; r < rank; ++r) sum += b[o * rank + r] * t[i * rank + r];
      y[i * out + o] += sum;
    }
  }
}

// Rotates each head of row i (heads of head_dim) by row i's angles: rope.h's
// half-split pairs.
void rotate(float* rows, int64_t n, int64_t heads, int64_t row_stride, int64_t head_dim, const float* cos,
            const float* sin) {
  const int64_t half = head_dim / 2;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t h = 0; h < heads; ++h) {
      float* x = rows + i * row_stride + h * head_dim;
      const float* c = cos + i * half;
      const float* s = sin + i * half;
      for (int64_t j = 0; j < half; ++j) {
        const float x1 = x[j], x2 = x[j + half];
        x[j] = x1 * c[j] - x2 * s[j];
        x[j + half] = x2 * c[j] + x1 * s[j];
      }
    }
  }
}

// Row `entry` of a key or value head as fp32: fp32 caches are read in place,
// bf16 ones widened into `buffer`.
inline const float* fp32_row(const float* rows, int64_t entry, int64_t d, float* /*buffer*/) { return rows + entry * d; }
inline const float* fp32_row(const c10::BFloat16* rows, int64_t entry, int64_t d, float* buffer) {
  for (int64_t e = 0; e < d; ++e) buffer[e] = static_cast<float>(rows[entry * d + e]);
  return buffer;
}

// One layer's attention for the n new rows, whose keys and values are
// already in the cache at entries length .. length + n - 1. Row i sees the
// entries before `length` that padding (may be null) does not mask, and the
// new entries up to its own. Query head h reads key/value head h / G.
//
// Split as flash-decoding does, so both cores share even one row's work: a
// task is one key/value head of one row over one span of keys, and keeps its
// own softmax (max, sum, weighted values) for the G query heads that read
// that key head; the spans are then merged. T: the cache's element type.
template <typename T>
void attend(const ModelConfig& c, const float* qkv, int64_t n, const T* keys, const T* values, int64_t capacity,
            int64_t length, const bool* padding, float* out, std::vector<float>& partial_buffer) {
  constexpr int64_t kSpan = 256;  // keys per task
  const int64_t H = c.n_head, KH = c.n_head_kv, G = H / KH, d = c.head_dim;
  const int64_t qkv_stride = (H + 2 * KH) * d;
  const int64_t spans = (length + n + kSpan - 1) / kSpan;
  const int64_t partial_size = G * (d + 2);  // per task: G x (max, sum, d weighted values)
  float* partials = sized(partial_buffer, n * KH * spans * partial_size);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const float minus_inf = -std::numeric_limits<float>::infinity();
  at::parallel_for(0, n * KH * spans, 1, [&](int64_t begin, int64_t end) {
    float scores[kSpan * 8];  // G <= 8 query heads per key head, checked at load
    float row[512];           // one key or value row in fp32 (head_dim <= 512, checked at load)
    for (int64_t task = begin; task < end; ++task) {
      const int64_t span = task % spans, kh = task / spans % KH, i = task / spans / KH;
      const int64_t first = span * kSpan, last = std::min(first + kSpan, length + i + 1);  // keys [first, last)
      float* partial = partials + task * partial_size;
      for (int64_t g = 0; g < G; ++g) {
        partial[g * (d + 2)] = minus_inf;
        partial[g * (d + 2) + 1] = 0.0f;
      }
      if (first >= last) continue;  // past this row's own entry
      const T* k = keys + kh * capacity * d;
      const T* v = values + kh * capacity * d;
      const float* q = qkv + i * qkv_stride + kh * G * d;  // the G query heads of this key head, one after another
      const int64_t count = last - first;
      for (int64_t j = 0; j < count; ++j) {
        const int64_t entry = first + j;
        const bool masked = padding && entry < length && padding[entry];
        const float* key = fp32_row(k, entry, d, row);
        for (int64_t g = 0; g < G; ++g) {
          float dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int64_t e = 0; e < d; ++e) dot += q[g * d + e] * key[e];
          scores[g * kSpan + j] = masked ? minus_inf : dot * scale;
        }
      }
      for (int64_t g = 0; g < G; ++g) {
        float* s = scores + g * kSpan;
        float* p = partial + g * (d + 2);
        const float top = *std::max_element(s, s + count);
        if (top == minus_inf) continue;  // every key of the span masked
        float total = 0;
        for (int64_t j = 0; j < count; ++j) total += (s[j] = std::exp(s[j] - top));
        p[0] = top;
        p[1] = total;
        std::fill(p + 2, p + 2 + d, 0.0f);
      }
      for (int64_t j = 0; j < count; ++j) {
        const float* value = fp32_row(v, first + j, d, row);
        for (int64_t g = 0; g < G; ++g) {
          float* p = partial + g * (d + 2);
          if (p[0] == minus_inf) continue;
          const float weight = scores[g * kSpan + j];
#pragma omp simd
          for (int64_t e = 0; e < d; ++e) p[2 + e] += weight * value[e];
        }
      }
    }
  });
  // Merge the spans: rescale each to the largest max (the row's own entry is
  // never masked, so some span has one).
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t kh = 0; kh < KH; ++kh) {
      const float* first_partial = partials + (i * KH + kh) * spans * partial_size;
      for (int64_t g = 0; g < G; ++g) {
        float top = minus_inf;
        for (int64_t span = 0; span < spans; ++span) top = std::max(top, first_partial[span * partial_size + g * (d + 2)]);
        float* o = out + i * H * d + (kh * G + g) * d;
        std::fill(o, o + d, 0.0f);
        float total = 0;
        for (int64_t span = 0; span < spans; ++span) {
          const float* p = first_partial + span * partial_size + g * (d + 2);
          if (p[0] == minus_inf) continue;
          const float rescale = std::exp(p[0] - top);
          total += p[1] * rescale;
          for (int64_t e = 0; e < d; ++e) o[e] += p[2 + e] * rescale;
        }
        for (int64_t e = 0; e < d; ++e) o[e] /= total;
      }
    }
  }
}

template <typename T>
void write_entries(T* dst, const float* src, int64_t n, int64_t src_stride, int64_t d) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t e = 0; e < d; ++e) dst[i * d + e] = static_cast<T>(src[i * src_stride + e]);
  }
}

}  // namespace

std::optional<StepWeights> load_step_weights(const GgufFile& file, const Weights& weights, const ModelConfig& c) {
  if (!step_shape_supported(c)) return std::nullopt;
  const bool permuted = c.arch == "llama";  // as in weights.cpp
  const std::vector<int64_t> q_order = permuted ? rope_row_order(c.n_head, c.head_dim) : std::vector<int64_t>{};
  const std::vector<int64_t> k_order = permuted ? rope_row_order(c.n_head_kv, c.head_dim) : std::vector<int64_t>{};
  StepWeights w;
  auto embed = matrix(file, "token_embd.weight");
  if (!embed) return std::nullopt;
  if (c.tied_embeddings) {
    w.output = std::move(*embed);
  } else {
    auto output = matrix(file, "output.weight");
    if (!output) return std::nullopt;
    w.output = std::move(*output);
    w.untied_embed = std::move(*embed);
  }
  for (int64_t l = 0; l < c.n_layer; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    auto q = matrix(file, p + "attn_q.weight", q_order), k = matrix(file, p + "attn_k.weight", k_order);
    auto v = matrix(file, p + "attn_v.weight"), o = matrix(file, p + "attn_output.weight");
    auto gate = matrix(file, p + "ffn_gate.weight"), up = matrix(file, p + "ffn_up.weight");
    auto down = matrix(file, p + "ffn_down.weight");
    if (!q || !k || !v || !o || !gate || !up || !down) return std::nullopt;
    w.layers.push_back({QuantMatrix::stack({*q, *k, *v}), std::move(*o), QuantMatrix::stack({*gate, *up}),
                        std::move(*down), fp32_bias(weights.layers[static_cast<size_t>(l)])});
  }
  return w;
}

std::optional<StepWeights> step_weights_of(const Weights& weights, const ModelConfig& c) {
  if (!step_shape_supported(c)) return std::nullopt;
  StepWeights w;
  w.output = copy_of(weights.output);
  if (!c.tied_embeddings) w.untied_embed = copy_of(weights.embed);
  for (const LayerWeights& l : weights.layers) {
    w.layers.push_back({copy_of(l.wqkv), copy_of(l.wo), copy_of(l.w_gate_up), copy_of(l.w_down), fp32_bias(l)});
  }
  return w;
}

bool Model::Impl::steps_on_cpu(const KvCache& cache, int64_t n) const {
  if (!step || !device.is_cpu() || n > kStepTokens) return false;
  if (dtype != at::kFloat && dtype != at::kBFloat16) return false;
  return std::all_of(cache.k.begin(), cache.k.end(), [&](const at::Tensor& t) { return t.is_contiguous() && t.scalar_type() == dtype; }) &&
         std::all_of(cache.v.begin(), cache.v.end(), [&](const at::Tensor& t) { return t.is_contiguous() && t.scalar_type() == dtype; });
}

at::Tensor Model::Impl::step_on_cpu(const int64_t* ids, const std::vector<StepSegment>& segments, bool all_logits,
                                    bool adapted) const {
  fit_threads_to_free_cores();
  const ModelConfig& c = config;
  int64_t n = 0;
  for (const StepSegment& segment : segments) n += segment.n;
  const StepWeights& w = *step;
  const int64_t E = c.n_embd, H = c.n_head, KH = c.n_head_kv, d = c.head_dim, F = c.n_ff;
  const int64_t qkv_rows = (H + 2 * KH) * d, half = d / 2;
  Scratch& s = Scratch::of_this_thread();
  float* x = sized(s.x, n * E);
  float* normed = sized(s.normed, n * std::max(E, H * d));
  float* qkv = sized(s.qkv, n * qkv_rows);
  float* attended = sized(s.attended, n * H * d);
  float* out = sized(s.out, n * E);
  float* gate_up = sized(s.gate_up, n * 2 * F);
  float* act = sized(s.act, n * F);
  float* cos = sized(s.cos, n * half);
  float* sin = sized(s.sin, n * half);

  for (int64_t i = 0; i < n; ++i) w.embed().dequantize_row(ids[i], x + i * E);
  const float* inv_freq = rope.inv_freq().data_ptr<float>();
  for (const StepSegment& segment : segments) {
    for (int64_t k = 0; k < segment.n; ++k) {
      const int64_t i = segment.first + k;
      const auto position = static_cast<float>(segment.cache->next_position + k);
      for (int64_t j = 0; j < half; ++j) {
        const float angle = position * inv_freq[j];
        cos[i * half + j] = std::cos(angle);
        sin[i * half + j] = std::sin(angle);
      }
    }
  }
  // Adapters: the one applied on the fly where it changes this part, and
  // any merged into libtorch's weights (the blocks here do not hold them).
  std::vector<const std::vector<LayerLora>*> loras;
  if (adapted && adapter) loras.push_back(&LoraAccess::of(*adapter).fused(at::kFloat));
  for (const auto& merged : merged_step_lora) loras.push_back(&merged);
  auto project = [&](const QuantMatrix& m, FusedLora LayerLora::*which, int64_t l, const float* in, float* y) {
    m.multiply(in, n, y);
    for (const auto* lora : loras) add_lora((*lora)[static_cast<size_t>(l)].*which, in, n, y, s.rank);
  };

  for (int64_t l = 0; l < c.n_layer; ++l) {
    const StepWeights::Layer& lw = w.layers[static_cast<size_t>(l)];
    const LayerWeights& norms = weights.layers[static_cast<size_t>(l)];
    rms_norm_rows(x, norms.attn_norm.data_ptr<float>(), n, E, c.rms_eps, normed);
    project(lw.wqkv, &LayerLora::qkv, l, normed, qkv);
    if (!lw.bqkv.empty()) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t r = 0; r < qkv_rows; ++r) qkv[i * qkv_rows + r] += lw.bqkv[static_cast<size_t>(r)];
      }
    }
    rotate(qkv, n, H + KH, qkv_rows, d, cos, sin);  // Q and K heads lie side by side
    // Each segment's new keys and values into its cache, then attention over
    // that cache alone, in the cache's element type.
    auto attend_in = [&](auto element, const StepSegment& segment) {
      using T = decltype(element);
      KvCache& cache = *segment.cache;
      T* keys = cache.k[l].data_ptr<T>();
      T* values = cache.v[l].data_ptr<T>();
      const float* seg_qkv = qkv + segment.first * qkv_rows;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t entry = (kh * cache.capacity + cache.length) * d;
        write_entries(keys + entry, seg_qkv + (H + kh) * d, segment.n, qkv_rows, d);
        write_entries(values + entry, seg_qkv + (H + KH + kh) * d, segment.n, qkv_rows, d);
      }
      const bool* padding = cache.padding.defined() ? cache.padding.data_ptr<bool>() : nullptr;
      attend(c, seg_qkv, segment.n, keys, values, cache.capacity, cache.length, padding,
             attended + segment.first * H * d, s.partials);
    };
    for (const StepSegment& segment : segments) {
      if (dtype == at::kFloat) {
        attend_in(float{}, segment);
      } else {
        attend_in(c10::BFloat16{}, segment);
      }
    }
    project(lw.wo, &LayerLora::o, l, attended, out);
    for (int64_t j = 0; j < n * E; ++j) x[j] += out[j];

    rms_norm_rows(x, norms.ffn_norm.data_ptr<float>(), n, E, c.rms_eps, normed);
    project(lw.w_gate_up, &LayerLora::gate_up, l, normed, gate_up);
    for (int64_t i = 0; i < n; ++i) {
      const float* g = gate_up + i * 2 * F;
      for (int64_t j = 0; j < F; ++j) act[i * F + j] = g[j] / (1.0f + std::exp(-g[j])) * g[F + j];  // silu(gate) * up
    }
    project(lw.w_down, &LayerLora::down, l, act, out);
    for (int64_t j = 0; j < n * E; ++j) x[j] += out[j];
  }

  // The rows whose logits are asked for: every token, or each segment's last.
  const int64_t rows = all_logits ? n : static_cast<int64_t>(segments.size());
  if (all_logits) {
    rms_norm_rows(x, weights.output_norm.data_ptr<float>(), n, E, c.rms_eps, normed);
  } else {
    for (size_t k = 0; k < segments.size(); ++k) {
      const int64_t last = segments[k].first + segments[k].n - 1;
      rms_norm_rows(x + last * E, weights.output_norm.data_ptr<float>(), 1, E, c.rms_eps,
                    normed + static_cast<int64_t>(k) * E);
    }
  }
  at::Tensor logits = at::empty({rows, c.n_vocab}, at::kFloat);
  w.output.multiply(normed, rows, logits.data_ptr<float>());
  return logits;
}

}  // namespace kvframe::runtime
