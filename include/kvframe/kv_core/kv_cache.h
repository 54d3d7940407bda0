// The KV types every stage shares: a sequence's cache, one block's keys and
// values as block attention stores them, and the shape that sizes them. Kept
// apart from model.h so that kv_diff (the block store and the assembled
// buffer) depends on these and on rope.h, not on the model that fills them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace kvframe::runtime {

// Keys and values of every layer for one sequence, preallocated to capacity.
// Layout per layer: [n_head_kv, capacity, head_dim]; keys are stored rotated
// (RoPE applied at their positions, see rope.h).
//
// A plain cache holds tokens 0 .. length-1 at entries 0 .. length-1. A cache
// assembled out of blocks (kv_diff) may leave slack entries between them and
// place blocks in any entry order: `padding` masks the entries no token may
// attend to, and `next_position` is the position the next appended token
// takes (the entry it is written to is always `length`).
struct KvCache {
  std::vector<at::Tensor> k, v;
  int64_t length = 0;    // entries in use: 0 .. length-1
  int64_t capacity = 0;
  int64_t next_position = 0;
  // Undefined (no padding) or bool [capacity] on the cache's device: true
  // marks an entry attention skips.
  at::Tensor padding;
};

// One block's keys and values as block attention stores them: encoded on its
// own, keys kept BEFORE RoPE so that placing the block at any position is one
// rotation (TurboRAG's "reordered positions"; see rope.h and kv_diff/).
// k, v: [n_layer, n_head_kv, n_tokens, head_dim], compute dtype, model device.
struct BlockKv {
  at::Tensor k, v;
  int64_t tokens() const { return k.defined() ? k.size(2) : 0; }
};

// What a KV buffer of a model needs to know to be allocated: layers, KV
// heads, head size, element type and device (Model::kv_shape()).
struct KvShape {
  int64_t n_layer = 0, n_head_kv = 0, head_dim = 0;
  at::ScalarType dtype = at::kFloat;
  at::Device device = at::kCPU;
};

}  // namespace kvframe::runtime
