// The CPU step backend of the forward pass (step_kernels.h): its loops, and
// Model::Impl::step_on_cpu, which runs the layer loop on it.
#include "step_kernels.h"

#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lora_impl.h"

namespace kvframe::runtime {
namespace {

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
// new entries up to its own; with a window > 0, only the last `window` of
// those (entries are positions here: a cache with padding has no window).
// Query head h reads key/value head h / G.
//
// Split as flash-decoding does, so both cores share even one row's work: a
// task is one key/value head of one row over one span of keys, and keeps its
// own softmax (max, sum, weighted values) for the G query heads that read
// that key head; the spans are then merged. T: the cache's element type.
template <typename T>
void attend_rows(const ModelConfig& c, int64_t window, const float* qkv, int64_t n, const T* keys, const T* values,
                 int64_t capacity, int64_t length, const bool* padding, float* out,
                 std::vector<float>& partial_buffer) {
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
      // Keys [first, last): this span's, up to the row's own entry and, in a
      // local layer, from the first its window reaches.
      const int64_t last = std::min(span * kSpan + kSpan, length + i + 1);
      const int64_t first = std::max(span * kSpan, window > 0 ? length + i + 1 - window : 0);
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

// Buffers of one step, reused across steps of the same thread.
struct Model::Impl::StepKernels::Scratch {
  std::vector<float> x, normed, qkv, attended, out, gate_up, act, rank, cos, sin, local_cos, local_sin, partials;
  static Scratch& of_this_thread() {
    thread_local Scratch s;
    return s;
  }
};

Model::Impl::StepKernels::StepKernels(const Impl& model, const int64_t* ids, const std::vector<StepSegment>& segments,
                                      bool adapted)
    : model_(model), ids_(ids), segments_(segments), scratch_(Scratch::of_this_thread()) {
  const ModelConfig& c = model.config;
  bool one_token_each = true;
  for (const StepSegment& segment : segments) {
    n_ += segment.n;
    one_token_each = one_token_each && segment.n == 1;
  }
  if (one_token_each) activations_ = model.step->activations;
  const int64_t E = c.n_embd, H = c.n_head, KH = c.n_head_kv, d = c.head_dim, F = c.n_ff, half = d / 2;
  // Sized once per step, so the kernels' pointers into them stay valid.
  Scratch& s = scratch_;
  sized(s.x, n_ * E);
  sized(s.normed, n_ * std::max(E, H * d));
  sized(s.qkv, n_ * (H + 2 * KH) * d);
  sized(s.attended, n_ * H * d);
  sized(s.out, n_ * E);
  sized(s.gate_up, n_ * 2 * F);
  sized(s.act, n_ * F);

  // The rows' RoPE angles, and at the local layers' base where it differs.
  auto angles = [&](const float* inv_freq, std::vector<float>& cos, std::vector<float>& sin) {
    sized(cos, n_ * half);
    sized(sin, n_ * half);
    for (const StepSegment& segment : segments) {
      for (int64_t k = 0; k < segment.n; ++k) {
        const int64_t i = segment.first + k;
        const auto position = static_cast<float>(segment.cache->next_position + k);
        for (int64_t j = 0; j < half; ++j) {
          const float angle = position * inv_freq[j];
          cos[static_cast<size_t>(i * half + j)] = std::cos(angle);
          sin[static_cast<size_t>(i * half + j)] = std::sin(angle);
        }
      }
    }
  };
  angles(model.rope.inv_freq().data_ptr<float>(), s.cos, s.sin);
  if (!c.rope.local_layers.empty()) angles(model.rope.inv_freq(true).data_ptr<float>(), s.local_cos, s.local_sin);
  if (adapted && model.adapter) loras_.push_back(&LoraAccess::of(*model.adapter).fused(at::kFloat));
  for (const auto& merged : model.merged_step_lora) loras_.push_back(&merged);
}

float* Model::Impl::StepKernels::embed() {
  const int64_t E = model_.config.n_embd;
  float* x = scratch_.x.data();
  for (int64_t i = 0; i < n_; ++i) model_.step->embed().dequantize_row(ids_[i], x + i * E);
  if (model_.config.embed_scale != 1.0) {
    const auto scale = static_cast<float>(model_.config.embed_scale);
    for (int64_t j = 0; j < n_ * E; ++j) x[j] *= scale;
  }
  return x;
}

float* Model::Impl::StepKernels::rms_norm(const float* x, int64_t layer, Norm norm) {
  const at::Tensor& weight = model_.weights.layers[static_cast<size_t>(layer)].norm(norm);
  const ModelConfig& c = model_.config;
  rms_norm_rows(x, weight.data_ptr<float>(), n_, c.n_embd, c.rms_eps, scratch_.normed.data());
  return scratch_.normed.data();
}

// Each Q and K head normed in place over its head_dim values.
float* Model::Impl::StepKernels::qk_norm(float* qkv, int64_t layer) {
  const LayerWeights& w = model_.weights.layers[static_cast<size_t>(layer)];
  const ModelConfig& c = model_.config;
  const int64_t H = c.n_head, KH = c.n_head_kv, d = c.head_dim, stride = (H + 2 * KH) * d;
  for (int64_t i = 0; i < n_; ++i) {
    for (int64_t h = 0; h < H + KH; ++h) {
      float* head = qkv + i * stride + h * d;
      rms_norm_rows(head, (h < H ? w.q_norm : w.k_norm).data_ptr<float>(), 1, d, c.rms_eps, head);
    }
  }
  return qkv;
}

float* Model::Impl::StepKernels::project(const float* x, int64_t layer, Projection projection) {
  const StepWeights::Layer& w = model_.step->layers[static_cast<size_t>(layer)];
  // The matrix, the adapter's pair, and the buffer the result goes to.
  const QuantMatrix* matrix = &w.w_down;
  FusedLora LayerLora::*pair = &LayerLora::down;
  float* y = scratch_.out.data();
  switch (projection) {
    case Projection::kQkv: matrix = &w.wqkv, pair = &LayerLora::qkv, y = scratch_.qkv.data(); break;
    case Projection::kOutput: matrix = &w.wo, pair = &LayerLora::o; break;
    case Projection::kGateUp: matrix = &w.w_gate_up, pair = &LayerLora::gate_up, y = scratch_.gate_up.data(); break;
    case Projection::kDown: break;
  }
  matrix->multiply(x, n_, y, QuantMatrix::Kernel::kBest, activations());
  for (const auto* lora : loras_) add_lora((*lora)[static_cast<size_t>(layer)].*pair, x, n_, y, scratch_.rank);
  if (projection == Projection::kQkv && !w.bqkv.empty()) {
    const auto rows = static_cast<int64_t>(w.bqkv.size());
    for (int64_t i = 0; i < n_; ++i) {
      for (int64_t r = 0; r < rows; ++r) y[i * rows + r] += w.bqkv[static_cast<size_t>(r)];
    }
  }
  return y;
}

float* Model::Impl::StepKernels::rope(float* qkv, int64_t layer) {
  const ModelConfig& c = model_.config;
  const bool local = c.is_local(layer);
  // Q and K heads lie side by side.
  const int64_t row = (c.n_head + 2 * c.n_head_kv) * c.head_dim;
  rotate(qkv, n_, c.n_head + c.n_head_kv, row, c.head_dim, (local ? scratch_.local_cos : scratch_.cos).data(),
         (local ? scratch_.local_sin : scratch_.sin).data());
  if (const at::Tensor& scale = model_.rope.query_scale(); scale.defined()) {  // LongRoPE's attention factor (rope.h)
    const float* s = scale.data_ptr<float>();
    for (int64_t i = 0; i < n_; ++i) {
      for (int64_t j = 0; j < c.n_head * c.head_dim; ++j) qkv[i * row + j] *= s[j % c.head_dim];
    }
  }
  return qkv;
}

// Each segment's new keys and values into its cache, then attention over
// that cache alone, in the cache's element type.
float* Model::Impl::StepKernels::attend(int64_t layer, const float* qkv) {
  const ModelConfig& c = model_.config;
  const int64_t H = c.n_head, KH = c.n_head_kv, d = c.head_dim, qkv_rows = (H + 2 * KH) * d;
  auto attend_in = [&](auto element, const StepSegment& segment) {
    using T = decltype(element);
    KvCache& cache = *segment.cache;
    T* keys = cache.k[layer].data_ptr<T>();
    T* values = cache.v[layer].data_ptr<T>();
    const float* seg_qkv = qkv + segment.first * qkv_rows;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t entry = (kh * cache.capacity + cache.length) * d;
      write_entries(keys + entry, seg_qkv + (H + kh) * d, segment.n, qkv_rows, d);
      write_entries(values + entry, seg_qkv + (H + KH + kh) * d, segment.n, qkv_rows, d);
    }
    const bool* padding = cache.padding.defined() ? cache.padding.data_ptr<bool>() : nullptr;
    attend_rows(c, c.window(layer), seg_qkv, segment.n, keys, values, cache.capacity, cache.length, padding,
                scratch_.attended.data() + segment.first * H * d, scratch_.partials);
  };
  for (const StepSegment& segment : segments_) {
    if (model_.dtype == at::kFloat) {
      attend_in(float{}, segment);
    } else {
      attend_in(c10::BFloat16{}, segment);
    }
  }
  return scratch_.attended.data();
}

float* Model::Impl::StepKernels::add_projection(float* x, const float* y, int64_t layer, Projection projection) {
  const float* out = project(y, layer, projection);
  const int64_t count = n_ * model_.config.n_embd;
  for (int64_t j = 0; j < count; ++j) x[j] += out[j];
  return x;
}

float* Model::Impl::StepKernels::add_normed(float* x, const float* y, int64_t layer, Norm norm) {
  const float* normed = rms_norm(y, layer, norm);
  const int64_t count = n_ * model_.config.n_embd;
  for (int64_t j = 0; j < count; ++j) x[j] += normed[j];
  return x;
}

float* Model::Impl::StepKernels::gated(const float* gate_up) {
  const int64_t F = model_.config.n_ff;
  const bool gelu = model_.config.gate == ModelConfig::Gate::kGeluTanh;
  float* act = scratch_.act.data();
  for (int64_t i = 0; i < n_; ++i) {
    const float* g = gate_up + i * 2 * F;
    for (int64_t j = 0; j < F; ++j) {
      const float v = g[j];
      // tanh-GELU as torch's gelu(approximate="tanh"), or silu.
      const float a = gelu ? 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)))
                           : v / (1.0f + std::exp(-v));
      act[i * F + j] = a * g[F + j];
    }
  }
  return act;
}

at::Tensor Model::Impl::StepKernels::logits(const float* x, const std::vector<int64_t>& rows) {
  const ModelConfig& c = model_.config;
  const int64_t E = c.n_embd, kept = static_cast<int64_t>(rows.size());
  const float* norm = model_.weights.output_norm.data_ptr<float>();
  float* normed = scratch_.normed.data();
  for (int64_t k = 0; k < kept; ++k) rms_norm_rows(x + rows[static_cast<size_t>(k)] * E, norm, 1, E, c.rms_eps, normed + k * E);
  at::Tensor logits = at::empty({kept, c.n_vocab}, at::kFloat);
  if (kept > 0) model_.step->output.multiply(normed, kept, logits.data_ptr<float>(), QuantMatrix::Kernel::kBest, activations());
  return logits;
}

at::Tensor Model::Impl::step_on_cpu(const int64_t* ids, const std::vector<StepSegment>& segments,
                                    const std::vector<int64_t>& rows, bool adapted) const {
  use_threads();
  StepKernels kernels(*this, ids, segments, adapted);
  return kernels.logits(forward_layers(kernels, config), rows);
}

}  // namespace kvframe::runtime
