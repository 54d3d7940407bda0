// Block attention's encoder (Model::encode_blocks): every block of a frame
// through the model in one pass, each block a row of grouped_attention.h's
// packed batch (with no earlier entries of its own).
#include <c10/core/InferenceMode.h>

#include <string>
#include <vector>

#include "grouped_attention.h"
#include "kvframe/runtime/model.h"
#include "model_impl.h"

namespace kvframe::runtime {

Result<std::vector<BlockKv>> Model::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                  const KvCache* context) const {
  try {
    return impl_->encode_blocks(blocks, context);
  } catch (const c10::Error& e) {
    return backend_error(e, "encoding " + std::to_string(blocks.size()) + " blocks");
  }
}

Result<std::vector<BlockKv>> Model::Impl::encode_blocks(const std::vector<std::vector<int32_t>>& blocks,
                                                        const KvCache* context) const {
  const int64_t n_layer = config.n_layer, H = config.n_head, KH = config.n_head_kv, d = config.head_dim;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (blocks[b].empty()) return Error{ErrorCode::kInvalidArgument, "block " + std::to_string(b) + " has no tokens"};
  }
  if (auto bad = check_ids(blocks, "block")) return *bad;
  if (blocks.empty()) return std::vector<BlockKv>{};
  int64_t S = 0;
  if (context) {
    if (auto bad = check_cache(*context, "the context")) return *bad;
    S = context->length;
  }
  c10::InferenceMode inference;  // no autograd bookkeeping

  const PackedRows packed = pack_rows(blocks, std::vector<int64_t>(blocks.size(), 0),
                                      context ? context->next_position : 0);
  const int64_t T = packed.tokens();
  at::Tensor context_padding;
  if (S > 0 && context->padding.defined()) context_padding = context->padding.narrow(0, 0, S);
  const std::vector<Group> groups = plan_groups(packed, S, context_padding, H, device);
  const Rope::Table rope_table = rope.table(at::tensor(packed.positions, at::kLong).to(device));
  // Keys before RoPE and values, per layer: [n_layer, KH, T, d].
  const auto options = at::TensorOptions(dtype).device(device);
  at::Tensor all_k = at::empty({n_layer, KH, T, d}, options), all_v = at::empty({n_layer, KH, T, d}, options);

  at::Tensor x = weights.embed.index_select(0, at::tensor(packed.ids, at::kLong).to(device));
  for (int64_t l = 0; l < n_layer; ++l) {
    const LayerWeights& w = weights.layers[l];
    // Nothing reads the last layer's output: it needs keys and values only, so
    // its query rows of the fused projection are skipped and it ends there.
    const bool last = l == n_layer - 1;
    const int64_t skip = last ? H * d : 0;
    at::Tensor qkv = at::linear(rms_norm(x, w.attn_norm), w.wqkv.narrow(0, skip, w.wqkv.size(0) - skip),
                                w.bqkv.defined() ? w.bqkv.narrow(0, skip, w.bqkv.size(0) - skip) : at::Tensor());
    at::Tensor k = qkv.narrow(1, H * d - skip, KH * d).view({T, KH, d});
    at::Tensor v = qkv.narrow(1, (H + KH) * d - skip, KH * d).view({T, KH, d});
    all_k[l].copy_(k.transpose(0, 1));
    all_v[l].copy_(v.transpose(0, 1));
    if (last) break;

    at::Tensor q = Rope::apply(qkv.narrow(1, 0, H * d).view({T, H, d}), rope_table);
    k = Rope::apply(k, rope_table);
    // A block's own keys are its new tokens, gathered into each group's slots.
    x = grouped_attention_and_ffn(w, x, q, groups, context, l, [&](const Group& g) {
      auto slots = [&](const at::Tensor& t) {
        return t.index_select(0, g.gather).view({g.B, g.Lmax, KH, d}).permute({2, 0, 1, 3});
      };
      return std::pair{slots(k), slots(v)};
    });
  }

  // Each block's own contiguous copy: a block kept across frames must not pin
  // this call's whole buffer. Keys first, then values, to bound the peak.
  std::vector<BlockKv> out(blocks.size());
  for (size_t b = 0; b < blocks.size(); ++b) out[b].k = all_k.narrow(2, packed.starts[b], packed.lengths[b]).contiguous();
  all_k.reset();
  for (size_t b = 0; b < blocks.size(); ++b) out[b].v = all_v.narrow(2, packed.starts[b], packed.lengths[b]).contiguous();
  return out;
}

}  // namespace kvframe::runtime
