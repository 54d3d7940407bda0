#include "placement.h"

namespace kvframe::kv_diff {

void apply_placements_torch(const std::vector<Placement>& placements, const PlacementTarget& target) {
  for (const Placement& p : placements) {
    const at::Tensor& base = p.src->k;  // [L, KH, n, d]
    const int64_t L = base.size(0), KH = base.size(1), n = base.size(2), d = base.size(3);
    const at::Tensor positions =
        at::arange(p.position, p.position + n, at::TensorOptions(at::kLong).device(target.k.device()));
    // Rope::apply rotates [n, heads, d] rows; all layers' heads of this block
    // go through as heads, in fp32, so the rounding is Rope's own.
    const at::Tensor rows = base.to(target.k.device(), at::kFloat).permute({2, 0, 1, 3}).reshape({n, L * KH, d});
    const runtime::Rope::Table table = target.rope->table(positions);
    at::Tensor rotated = runtime::Rope::apply(rows, table).view({n, L, KH, d}).permute({1, 2, 0, 3});
    if (table.local) {  // local layers (Gemma 3) rotate at their own base
      const at::Tensor local = runtime::Rope::apply(rows, *table.local).view({n, L, KH, d}).permute({1, 2, 0, 3});
      const std::vector<bool>& layers = target.rope->params().local_layers;
      for (int64_t l = 0; l < L; ++l) {
        if (layers[static_cast<size_t>(l)]) rotated[l].copy_(local[l]);
      }
    }
    target.k.narrow(2, p.offset, n).copy_(rotated);  // copy_ casts to the buffer dtype
    if (p.write_v) target.v.narrow(2, p.offset, n).copy_(p.src->v);
  }
}

}  // namespace kvframe::kv_diff
