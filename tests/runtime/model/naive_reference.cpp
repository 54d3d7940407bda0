#include "naive_reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kvframe::test {
namespace {

using Vec = std::vector<double>;

// A GGUF matrix with dims [in, out]: row o holds the `in` weights of output o.
struct Matrix {
  int64_t in = 0, out = 0;
  std::vector<float> w;
  Vec apply(const Vec& x) const {
    Vec y(static_cast<size_t>(out), 0.0);
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t i = 0; i < in; ++i) y[o] += static_cast<double>(w[o * in + i]) * x[i];
    }
    return y;
  }
};

Matrix tensor(const runtime::GgufFile& f, const std::string& name) {
  const runtime::GgufTensorInfo* t = f.find_tensor(name);
  if (!t) throw std::runtime_error("naive reference: no tensor " + name);
  Matrix m;
  m.in = t->dims[0];
  m.out = t->dims.size() > 1 ? t->dims[1] : 1;
  m.w.resize(static_cast<size_t>(t->n_elements()));
  runtime::dequantize(t->type, t->data, m.w.data(), t->n_elements());
  return m;
}

Vec rms_norm(const Vec& x, const Matrix& weight, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * weight.w[i];
  return y;
}

// Each head of `v` (heads of hd values) RMS-normed in place by `weight`.
void norm_heads(Vec& v, int64_t hd, const Matrix& weight, double eps) {
  for (size_t h = 0; h * hd < v.size(); ++h) {
    const Vec head(v.begin() + static_cast<int64_t>(h) * hd, v.begin() + static_cast<int64_t>(h + 1) * hd);
    const Vec normed = rms_norm(head, weight, eps);
    std::copy(normed.begin(), normed.end(), v.begin() + static_cast<int64_t>(h) * hd);
  }
}

// Rotates each head of `v` in place at position `pos`, as ggml_rope_ext: the
// first `rot` of each head's hd values (the rest pass through), cos and sin
// times `mscale` (LongRoPE's attention factor).
void rope(Vec& v, int64_t heads, int64_t hd, int64_t rot, int64_t pos, double base, bool interleaved,
          const std::vector<float>& factors, double mscale) {
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < rot / 2; ++i) {
      double theta = static_cast<double>(pos) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(rot));
      if (!factors.empty()) theta /= factors[i];
      const size_t a = h * hd + (interleaved ? 2 * i : i);
      const size_t b = h * hd + (interleaved ? 2 * i + 1 : i + rot / 2);
      const double x0 = v[a], x1 = v[b];
      v[a] = mscale * (x0 * std::cos(theta) - x1 * std::sin(theta));
      v[b] = mscale * (x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  }
}

// Rows [first, first + count) of a matrix's outputs: a fused tensor's part.
Matrix rows(const Matrix& m, int64_t first, int64_t count) {
  Matrix part{m.in, count, {}};
  part.w.assign(m.w.begin() + first * m.in, m.w.begin() + (first + count) * m.in);
  return part;
}

}  // namespace

std::vector<std::vector<double>> naive_logits(const runtime::GgufFile& f, const std::vector<int>& tokens,
                                              bool long_factors) {
  const std::string arch = f.get_string("general.architecture").value();
  const std::string a = arch + ".";
  const int64_t L = f.get_int(a + "block_count").value(), E = f.get_int(a + "embedding_length").value();
  const int64_t H = f.get_int(a + "attention.head_count").value();
  const int64_t KH = f.get_int(a + "attention.head_count_kv").value();
  const double base = f.get_float(a + "rope.freq_base").value();
  const double eps = f.get_float(a + "attention.layer_norm_rms_epsilon").value();
  const int64_t hd = E / H;
  const bool interleaved = arch == "llama";
  std::vector<float> factors;
  if (f.find_tensor("rope_freqs.weight")) factors = tensor(f, "rope_freqs.weight").w;
  // Phi-3: fused Q|K|V and gate|up, partial rotary, LongRoPE's short or long
  // factors and its attention factor (with either).
  const bool phi = arch == "phi3";
  const int64_t rot = f.find(a + "rope.dimension_count") ? f.get_int(a + "rope.dimension_count").value() : E / H;
  const char* longrope = long_factors ? "rope_factors_long.weight" : "rope_factors_short.weight";
  if (phi && f.find_tensor(longrope)) factors = tensor(f, longrope).w;
  const double mscale = f.find(a + "rope.scaling.attn_factor") ? f.get_float(a + "rope.scaling.attn_factor").value() : 1.0;
  const bool biased = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  // Qwen3 and Gemma 3: QK norms; Gemma 3 also post norms, GeGLU, scaled
  // embeddings, and local layers (every pattern-th global) with a window and
  // a RoPE base of their own.
  const bool qk_norm = arch == "qwen3" || arch == "gemma3", gemma = arch == "gemma3";
  const int64_t window = gemma && f.find(a + "attention.sliding_window") ? f.get_int(a + "attention.sliding_window").value() : 0;
  const int64_t pattern = window ? f.get_int(a + "attention.sliding_window_pattern").value() : 0;
  const double local_base = window ? f.get_float(a + "rope.freq_base_swa").value() : base;

  const Matrix embed = tensor(f, "token_embd.weight");
  const Matrix head = f.find_tensor("output.weight") ? tensor(f, "output.weight") : embed;
  const int64_t T = static_cast<int64_t>(tokens.size());

  std::vector<Vec> x(tokens.size());
  for (int64_t t = 0; t < T; ++t) x[t].assign(embed.w.begin() + tokens[t] * E, embed.w.begin() + (tokens[t] + 1) * E);
  if (gemma) {
    for (Vec& row : x) {
      for (double& v : row) v *= std::sqrt(static_cast<double>(E));
    }
  }

  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const Matrix attn_norm = tensor(f, p + "attn_norm.weight");
    const Matrix qkv = phi ? tensor(f, p + "attn_qkv.weight") : Matrix{};
    const Matrix wq = phi ? rows(qkv, 0, H * hd) : tensor(f, p + "attn_q.weight");
    const Matrix wk = phi ? rows(qkv, H * hd, KH * hd) : tensor(f, p + "attn_k.weight");
    const Matrix wv = phi ? rows(qkv, (H + KH) * hd, KH * hd) : tensor(f, p + "attn_v.weight");
    const Matrix wo = tensor(f, p + "attn_output.weight"), ffn_norm = tensor(f, p + "ffn_norm.weight");
    const Matrix up_file = tensor(f, p + "ffn_up.weight");
    const Matrix gate = phi ? rows(up_file, 0, up_file.out / 2) : tensor(f, p + "ffn_gate.weight");
    const Matrix up = phi ? rows(up_file, up_file.out / 2, up_file.out / 2) : up_file;
    const Matrix down = tensor(f, p + "ffn_down.weight");
    const bool local = window > 0 && l % pattern < pattern - 1;
    std::vector<Vec> q(T), k(T), v(T);
    for (int64_t t = 0; t < T; ++t) {
      const Vec h = rms_norm(x[t], attn_norm, eps);
      q[t] = wq.apply(h), k[t] = wk.apply(h), v[t] = wv.apply(h);
      if (biased) {
        const Matrix bq = tensor(f, p + "attn_q.bias"), bk = tensor(f, p + "attn_k.bias");
        const Matrix bv = tensor(f, p + "attn_v.bias");
        for (size_t i = 0; i < q[t].size(); ++i) q[t][i] += bq.w[i];
        for (size_t i = 0; i < k[t].size(); ++i) k[t][i] += bk.w[i], v[t][i] += bv.w[i];
      }
      if (qk_norm) {
        norm_heads(q[t], hd, tensor(f, p + "attn_q_norm.weight"), eps);
        norm_heads(k[t], hd, tensor(f, p + "attn_k_norm.weight"), eps);
      }
      rope(q[t], H, hd, rot, t, local ? local_base : base, interleaved, local ? std::vector<float>{} : factors, mscale);
      rope(k[t], KH, hd, rot, t, local ? local_base : base, interleaved, local ? std::vector<float>{} : factors, mscale);
    }
    for (int64_t t = 0; t < T; ++t) {
      Vec attn(static_cast<size_t>(H * hd), 0.0);
      for (int64_t h = 0; h < H; ++h) {
        const int64_t kh = h / (H / KH);
        Vec scores(static_cast<size_t>(t + 1), -INFINITY);
        double top = -INFINITY;
        for (int64_t s = local ? std::max<int64_t>(0, t - window + 1) : 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t i = 0; i < hd; ++i) dot += q[t][h * hd + i] * k[s][kh * hd + i];
          scores[s] = dot / std::sqrt(static_cast<double>(hd));
          top = std::max(top, scores[s]);
        }
        double total = 0;
        for (double& sc : scores) total += (sc = std::exp(sc - top));
        for (int64_t s = 0; s <= t; ++s) {
          for (int64_t i = 0; i < hd; ++i) attn[h * hd + i] += scores[s] / total * v[s][kh * hd + i];
        }
      }
      Vec o = wo.apply(attn);
      if (gemma) o = rms_norm(o, tensor(f, p + "post_attention_norm.weight"), eps);
      for (int64_t i = 0; i < E; ++i) x[t][i] += o[i];
      const Vec h = rms_norm(x[t], ffn_norm, eps);
      const Vec g = gate.apply(h), u = up.apply(h);
      Vec act(g.size());
      for (size_t i = 0; i < g.size(); ++i) {
        const double gelu = 0.5 * g[i] * (1.0 + std::tanh(0.7978845608028654 * (g[i] + 0.044715 * g[i] * g[i] * g[i])));
        act[i] = (gemma ? gelu : g[i] / (1.0 + std::exp(-g[i]))) * u[i];
      }
      Vec d = down.apply(act);
      if (gemma) d = rms_norm(d, tensor(f, p + "post_ffw_norm.weight"), eps);
      for (int64_t i = 0; i < E; ++i) x[t][i] += d[i];
    }
  }
  const Matrix output_norm = tensor(f, "output_norm.weight");
  std::vector<std::vector<double>> logits;
  for (int64_t t = 0; t < T; ++t) logits.push_back(head.apply(rms_norm(x[t], output_norm, eps)));
  return logits;
}

double largest_difference(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  double largest = 0;
  for (size_t t = 0; t < a.size(); ++t) {
    for (size_t v = 0; v < a[t].size(); ++v) largest = std::max(largest, std::abs(a[t][v] - b[t][v]));
  }
  return largest;
}

}  // namespace kvframe::test
