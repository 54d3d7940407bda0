// Attention of new queries over a KV cache layer on the CPU in one pass over
// the keys (flash attention's online softmax, written for AVX-512), for the
// cache plan's shapes: a block-attention query's final block over a long
// frame, a prefill's chunk. The explicit path (matmul, masks, softmax,
// matmul through libtorch) materializes a [heads, queries, keys] score matrix
// several times over in memory, and on the CPU its passes over that matrix
// (allocation, an fp32 softmax, conversions) cost several times the two
// matmuls; here each tile of scores stays in L1 and is used as it is made.
//
// Layout: query rows are (token, query head) pairs of one KV head, 32 to a
// tile, one SIMD lane per row, so the softmax's running maximum and sum are
// vectors over rows and never need a horizontal reduction; keys are read in
// blocks of 32, converted once to fp32 for the tile. Scores are fp32 from the
// stored values (no rounding to the cache's dtype in between, unlike the
// explicit path's bf16 scores), so the two agree to the dtype's precision,
// not bit for bit (cpu_attention_test pins the tolerance against fp32).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace kvframe::runtime {

// Whether cpu_attention runs queries like q [T, H, d]: CPU tensors of fp32 or
// bf16, a head size of 64, 128 or 256, on a CPU with AVX-512 (F, BW, VL,
// DQ), and no gradients to track.
bool cpu_attention_runs(const at::Tensor& q);

// Query rows one vector holds: a lone sequence with fewer (a decoding step's)
// would leave most lanes of its tile empty.
inline constexpr int64_t kCpuAttentionVectorRows = 16;

// One sequence of a call: its queries, and its own entries, which it reads
// after the call's shared context (if any).
struct AttentionSequence {
  int64_t first = 0, n = 0;  // its queries: rows [first, first + n) of q and of out
  at::Tensor keys, values;   // [KH, L, d] (L >= n): the last n are its queries' own entries
};

// Each sequence's queries (rotated; q [T, H, d], unit stride in d) over the
// keys it sees, written to its rows of out [T, H d] (q's dtype; other rows
// are left alone). A sequence's entries are the shared context's S entries
// (context_k, context_v [KH, S, d], or undefined: none), then its own; its
// query i is entry S + L - n + i and sees the entries up to it, none of the
// first P that `padding` (bool [P], or undefined) marks, and with window > 0
// only its last `window`, its own included. A tile holds 32 rows: short
// sequences share tiles (a batch of decoding steps fills one), while a lone
// sequence of a few rows leaves most of its tile's lanes empty. Each row's
// result is the same as in a call of its sequence alone, bit for bit, and as
// in a call with the context's entries at the start of its own (no context).
void cpu_attention(const at::Tensor& q, const std::vector<AttentionSequence>& sequences, const at::Tensor& context_k,
                   const at::Tensor& context_v, const at::Tensor& padding, int64_t window, at::Tensor& out);

}  // namespace kvframe::runtime
