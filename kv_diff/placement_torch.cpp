#include "placement.h"

namespace kvframe::kv_diff {
namespace {

// The layers that rotate at one base, as indices on `device`: for most
// models one group of every layer (undefined: no indexing); Gemma 3's
// global and local layers apart, each rotated once at its own base.
std::vector<std::pair<at::Tensor, bool>> layer_groups(const runtime::RopeParams& rope, int64_t n_layer,
                                                      const at::Device& device) {
  if (rope.local_layers.empty()) return {{at::Tensor(), false}};
  std::vector<std::pair<at::Tensor, bool>> groups;
  for (bool local : {false, true}) {
    std::vector<int64_t> layers;
    for (int64_t l = 0; l < n_layer; ++l) {
      if (rope.is_local(l) == local) layers.push_back(l);
    }
    if (!layers.empty()) groups.emplace_back(at::tensor(layers, at::kLong).to(device), local);
  }
  return groups;
}

}  // namespace

void apply_placements_torch(const std::vector<Placement>& placements, const PlacementTarget& target) {
  if (placements.empty()) return;
  const at::Device device = target.k.device();
  const auto groups = layer_groups(target.rope->params(), target.k.size(0), device);
  for (const Placement& p : placements) {
    const at::Tensor& base = p.src->k;  // [L, KH, n, d]
    const int64_t n = base.size(2), d = base.size(3);
    const at::Tensor positions = at::arange(p.position, p.position + n, at::TensorOptions(at::kLong).device(device));
    const runtime::Rope::Table table = target.rope->table(positions);
    // Rope::apply rotates [n, heads, d] rows; each group's layers' heads of
    // this block go through as heads, in fp32, so the rounding is Rope's own.
    const at::Tensor rows = base.to(device, at::kFloat).permute({2, 0, 1, 3});  // [n, L, KH, d]
    at::Tensor rotated;
    for (const auto& [layers, local] : groups) {
      const at::Tensor part = layers.defined() ? rows.index_select(1, layers) : rows;
      const at::Tensor turned = runtime::Rope::apply(part.reshape({n, -1, d}), table.of(local)).view(part.sizes());
      if (!layers.defined()) {
        rotated = turned;
        continue;
      }
      if (!rotated.defined()) rotated = at::empty_like(rows);
      rotated.index_copy_(1, layers, turned);
    }
    target.k.narrow(2, p.offset, n).copy_(rotated.permute({1, 2, 0, 3}));  // copy_ casts to the buffer dtype
    if (p.write_v) target.v.narrow(2, p.offset, n).copy_(p.src->v);
  }
}

}  // namespace kvframe::kv_diff
