#include "kvframe/kv_core/rope.h"

#include <ATen/ATen.h>

namespace kvframe::runtime {

namespace {

// base^(-2i/r) for the r rotated dimensions, computed in fp32 exactly as the
// reference (transformers' LlamaRotaryEmbedding): from an fp32 exponent, so
// the angles match it bit for bit. Then 0 for the pairs partial rotary
// passes through (rope.h).
at::Tensor plain_inv_freq(double base, const RopeParams& params) {
  const int64_t r = params.rotated();
  at::Tensor exponent = at::arange(0, r, 2, at::kLong).to(at::kFloat) / static_cast<float>(r);
  at::Tensor rotated = (1.0 / at::pow(base, exponent)).to(at::kFloat);
  return at::cat({rotated, at::zeros({(params.head_dim - r) / 2}, at::kFloat)}).contiguous();
}

}  // namespace

Rope::Rope(const RopeParams& params) : params_(params) {
  const int64_t half = params_.head_dim / 2, rotated_half = params_.rotated() / 2;
  inv_freq_ = plain_inv_freq(params_.freq_base, params_);
  if (!params_.local_layers.empty()) local_inv_freq_ = plain_inv_freq(params_.local_freq_base, params_);
  if (!params_.freq_factors.empty()) {
    at::Tensor factors = at::ones({half}, at::kFloat);
    factors.narrow(0, 0, rotated_half).copy_(at::tensor(params_.freq_factors, at::kFloat).narrow(0, 0, rotated_half));
    inv_freq_ = inv_freq_ / factors;
  }
  if (params_.attn_factor != 1.0) {
    // The rotated pairs are (j, j + d/2) for j < r/2.
    at::Tensor pair = at::ones({half}, at::kFloat);
    pair.narrow(0, 0, rotated_half).fill_(params_.attn_factor * params_.attn_factor);
    query_scale_ = at::cat({pair, pair}).contiguous();
  }
  if (params_.linear_scale != 1.0) inv_freq_ = inv_freq_ / static_cast<float>(params_.linear_scale);
  inv_freq_ = inv_freq_.to(at::kFloat).contiguous();
}

Rope::Table Rope::table(const at::Tensor& positions, at::ScalarType dtype) const {
  Table t = table(positions, inv_freq_.to(positions.device()), dtype);
  if (local_inv_freq_.defined()) {
    t.local = std::make_shared<const Table>(table(positions, local_inv_freq_.to(positions.device()), dtype));
  }
  return t;
}

Rope::Table Rope::table(const at::Tensor& positions, const at::Tensor& inv_freq, at::ScalarType dtype) {
  const at::Tensor angles = positions.to(at::kFloat).unsqueeze(1) * inv_freq.unsqueeze(0);  // [n, d/2]
  Table t{angles.cos().to(dtype), angles.sin().to(dtype), {}, {}, nullptr};
  if (angles.is_cuda()) {
    t.cos_full = at::cat({t.cos, t.cos}, -1);
    t.sin_signed = at::cat({-t.sin, t.sin}, -1);
  }
  return t;
}

Rope::Table Rope::Table::rows(const at::Tensor& rows) const {
  auto pick = [&](const at::Tensor& t) { return t.defined() ? t.index_select(0, rows) : t; };
  return {pick(cos), pick(sin), pick(cos_full), pick(sin_signed),
          local ? std::make_shared<const Table>(local->rows(rows)) : nullptr};
}

at::Tensor Rope::apply(const at::Tensor& x, const Table& table) {
  // Half-split pairs: (x1, x2) = (x[..., :d/2], x[..., d/2:]) rotate as complex numbers.
  const int64_t half = x.size(-1) / 2;
  at::Tensor x1 = x.narrow(-1, 0, half), x2 = x.narrow(-1, half, half);
  if (table.cos_full.defined() && table.cos_full.scalar_type() == x.scalar_type()) {
    // x (cos, cos) + (x2, x1) (-sin, sin): the same rotation.
    return at::addcmul(x * table.cos_full.unsqueeze(1), at::cat({x2, x1}, -1), table.sin_signed.unsqueeze(1));
  }
  at::Tensor cos = table.cos.unsqueeze(1).to(x.scalar_type());  // [n, 1, d/2]: every head alike
  at::Tensor sin = table.sin.unsqueeze(1).to(x.scalar_type());
  return at::cat({x1 * cos - x2 * sin, x2 * cos + x1 * sin}, -1);
}

at::Tensor Rope::rotate(const at::Tensor& x, const at::Tensor& delta, int64_t layer) const {
  return apply(x, table(delta).of(params_.is_local(layer)));
}

}  // namespace kvframe::runtime
