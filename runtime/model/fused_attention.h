// Attention through torch's fused flash kernels, where the build and the
// device have them (torch >= 2.5 built with CUDA, a GPU, fp16 or bf16): no
// [heads, queries, keys] score matrix, split over the keys when the queries
// are few (a decoding step over 32K entries), grouped KV heads read as they
// are. Elsewhere every caller keeps its explicit matmul-softmax path, which
// is also what these are checked against (fused_attention_test, -L gpu).
//
// Both take keys already rotated and mask causally from the bottom right:
// query i of n sees the keys up to L - n + i (flash attention 2's rule for
// unequal lengths), which is "everything cached before, then causally among
// the new tokens" — a prefill, a decoding step and a query after cached
// blocks alike. Neither handles padding: callers with masked entries keep
// the explicit path.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace kvframe::runtime {

// Which fused kernels run for tensors of a device and dtype: each shape goes
// through its own kernel, so each is checked on its own.
struct FusedSupport {
  bool cache = false;        // fused_cache_attention with n == 1 or n == L
  bool cache_after = false;  // fused_cache_attention with 1 < n < L
  bool folded = false;       // ... and over long caches with grouped KV heads, the heads folded (below)
  bool rows = false;         // fused_rows_attention
  bool step = false;         // fused_step_attention
};
// The first call for a device and dtype checks each kernel against the
// explicit path on small random inputs and reports the outcome on stderr
// once; a kernel that throws or disagrees is left off for the process
// (callers keep their explicit path) rather than failing a session.
// All false off CUDA, for fp32 and on libtorch before 2.5.
FusedSupport fused_support(const at::Device& device, at::ScalarType dtype);

// n queries q [n, H, d] over the keys and values of one cache layer,
// keys/values [KH, L, d] (L >= n; the last n are the queries' own entries).
// Returns [n, H d]. With grouped KV heads, several queries and a long cache
// (a query's final block after 32K entries), `fold` reads the cached
// entries with the G query heads of each KV head folded into its rows: flash
// attention then runs G n rows per KV head in one tile instead of n rows per
// query head in a tile each (most of it empty at n = 34), and the queries'
// own entries apart, causally; the two merge by their log-sum-exps.
at::Tensor fused_cache_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values, bool fold);

// Ragged rows packed end to end: row r's queries are rows [q_starts[r],
// q_starts[r+1]) of the packed queries, its keys and values rows
// [k_starts[r], k_starts[r+1]) of the packed keys; each row's keys end with
// its queries' own entries. Made once per pass, read by every layer.
struct RaggedRows {
  at::Tensor cu_q, cu_k;  // int32 [rows + 1] on the device: q_starts, k_starts
  int64_t max_q = 0, max_k = 0;
};
RaggedRows ragged_rows(const std::vector<int64_t>& q_starts, const std::vector<int64_t>& k_starts,
                       const at::Device& device);

// q [T, H, d] over k, v [Tk, KH, d] laid out as `rows` says. Returns [T, H d].
at::Tensor fused_rows_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const RaggedRows& rows);

// One query q [1, H, d] over the first `used` entries of a cache layer
// keys/values [KH, capacity, d], with `used` an int32 [1] tensor on the
// device: how many entries count is read on the device, so one CUDA graph of
// a decoding step serves every length (decode_graph.h). cu_q, cu_k: int32
// {0, 1} and {0, capacity} on the device, made once by the caller (a graph
// cannot copy from the host). Entries past `used` are never read.
at::Tensor fused_step_attention(const at::Tensor& q, const at::Tensor& keys, const at::Tensor& values,
                                const at::Tensor& used, const at::Tensor& cu_q, const at::Tensor& cu_k);

}  // namespace kvframe::runtime
