#include "kvframe/kv_core/rope.h"

#include <ATen/ATen.h>

namespace kvframe::runtime {

Rope::Rope(const RopeParams& params) : params_(params) {
  // Computed in fp32 exactly as the reference (transformers' LlamaRotaryEmbedding):
  // base^(2i/d) from an fp32 exponent, so the angles match it bit for bit.
  const int64_t half = params_.head_dim / 2;
  at::Tensor exponent = at::arange(0, params_.head_dim, 2, at::kLong).to(at::kFloat) /
                        static_cast<float>(params_.head_dim);
  inv_freq_ = 1.0 / at::pow(params_.freq_base, exponent);
  if (!params_.freq_factors.empty()) {
    inv_freq_ = inv_freq_ / at::tensor(params_.freq_factors, at::kFloat).narrow(0, 0, half);
  }
  if (params_.linear_scale != 1.0) inv_freq_ = inv_freq_ / static_cast<float>(params_.linear_scale);
  inv_freq_ = inv_freq_.to(at::kFloat).contiguous();
}

Rope::Table Rope::table(const at::Tensor& positions, at::ScalarType dtype) const {
  return table(positions, inv_freq_.to(positions.device()), dtype);
}

Rope::Table Rope::table(const at::Tensor& positions, const at::Tensor& inv_freq, at::ScalarType dtype) {
  const at::Tensor angles = positions.to(at::kFloat).unsqueeze(1) * inv_freq.unsqueeze(0);  // [n, d/2]
  Table t{angles.cos().to(dtype), angles.sin().to(dtype), {}, {}};
  if (angles.is_cuda()) {
    t.cos_full = at::cat({t.cos, t.cos}, -1);
    t.sin_signed = at::cat({-t.sin, t.sin}, -1);
  }
  return t;
}

Rope::Table Rope::Table::rows(const at::Tensor& rows) const {
  auto pick = [&](const at::Tensor& t) { return t.defined() ? t.index_select(0, rows) : t; };
  return {pick(cos), pick(sin), pick(cos_full), pick(sin_signed)};
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

at::Tensor Rope::rotate(const at::Tensor& x, const at::Tensor& delta) const {
  return apply(x, table(delta));
}

}  // namespace kvframe::runtime
