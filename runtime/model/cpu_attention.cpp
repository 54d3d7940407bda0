// Attention over a cache layer on the CPU in one pass over the keys (see
// cpu_attention.h).
#include "cpu_attention.h"

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <cmath>

#include "quant_kernels.h"  // cpu_has_avx512, bf16x16_to_ps, <immintrin.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// As quant_kernels.h says: GCC 12's AVX-512 intrinsics start from
// _mm512_undefined_ps(), which it then calls uninitialized (a false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace kvframe::runtime {
namespace {

#if defined(__x86_64__)

#define KV_ATTENTION_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))

constexpr int64_t kTileRows = 32;  // query rows per tile: two vectors of 16 lanes
constexpr int64_t kKeyBlock = 32;  // keys converted to fp32 and scored at a time
constexpr int64_t kScoreKeys = 8;  // keys whose scores accumulate in registers at once
constexpr int64_t kValueDims = 8;  // output dimensions that accumulate in registers at once

// Where a call's rows come from and go, in elements.
template <typename T>
struct Layout {
  int64_t G, S, P, window;
  const bool* padding;  // P entries, or null
  const T* q;
  int64_t q_token, q_head;
  const T *context_k, *context_v;  // S entries
  int64_t context_k_head, context_k_row, context_v_head, context_v_row;
  T* out;
  int64_t out_token;
  float scale;  // 1 / sqrt(d), times log2(e): scores are in base 2
};

// A sequence's own entries.
template <typename T>
struct Own {
  int64_t first, n, L;
  const T *k, *v;
  int64_t k_head, k_row, v_head, v_row;
};

KV_ATTENTION_AVX512 inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }

KV_ATTENTION_AVX512 inline __m512 load16(const c10::BFloat16* p) { return quant_kernels::bf16x16_to_ps(p); }

// 2^x per lane for x <= 0, to fp32 precision; -inf (a masked key) gives 0.
KV_ATTENTION_AVX512 inline __m512 exp2_ps(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-200.0f));  // 2^-200 is below fp32's range: 0
  const __m512 whole = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, whole);  // in [-0.5, 0.5]
  // 2^f = e^(f ln 2) by its Taylor series to the 7th power: the first term
  // left out is below fp32's rounding there.
  constexpr float kTerms[] = {1.5252734e-05f, 1.5403530e-04f, 1.3333558e-03f, 9.6181291e-03f,
                              5.5504109e-02f, 2.4022651e-01f, 6.9314718e-01f, 1.0f};
  __m512 p = _mm512_set1_ps(kTerms[0]);
  for (size_t t = 1; t < std::size(kTerms); ++t) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kTerms[t]));
  return _mm512_scalef_ps(p, whole);
}

// Up to 32 query rows of one KV head, from one sequence or several short
// ones, one lane each.
template <typename T>
struct Tile {
  int64_t head = 0;
  int64_t rows = 0;
  const Own<T>* own[kTileRows];
  int64_t token[kTileRows];  // within its sequence
  int64_t group[kTileRows];  // the query head within the KV head's G
};

// A tile's state as it goes through the keys.
template <int64_t D>
struct Running {
  alignas(64) float qt[D][kTileRows];       // the rows' queries, transposed and scaled
  alignas(64) float ot[D][kTileRows] = {};  // their outputs so far, transposed, unnormalized
  alignas(64) float kf[kKeyBlock][D];
  alignas(64) float vf[kKeyBlock][D];
  alignas(64) float p[kKeyBlock][kTileRows];  // a block's scores, then their exponentials
  alignas(64) int32_t lo[kTileRows], hi[kTileRows];  // each row's visible entries [lo, hi)
  __m512 m[2], l[2];                          // running maximum and sum per row
};

// Where a sequence's entries are stored: those before `split` in the shared
// context, the others in its own rows (entry split at own_k, own_v).
template <typename T>
struct Rows {
  int64_t split;
  const T *context_k, *context_v;
  int64_t context_k_row, context_v_row;
  const T *own_k, *own_v;
  int64_t own_k_row, own_v_row;
};

// Entries kb .. kb + nb - 1 (in a sequence's order: the context's, then its
// own) into the running softmax of the lanes in `lanes`. masked: some lane
// may not see some entry of the block (else every lane sees every one).
template <int64_t D, typename T>
KV_ATTENTION_AVX512 void attend_block(Running<D>& run, const Layout<T>& s, const Rows<T>& at, int64_t kb, int64_t nb,
                                      __mmask32 lanes, bool masked) {
  const __m512 neg_inf = _mm512_set1_ps(-INFINITY), zero = _mm512_setzero_ps();
  const int64_t scored = (nb + kScoreKeys - 1) / kScoreKeys * kScoreKeys;
  for (int64_t j = 0; j < nb; ++j) {
    const int64_t e = kb + j;
    const T* key = e < at.split ? at.context_k + e * at.context_k_row : at.own_k + (e - at.split) * at.own_k_row;
    const T* value = e < at.split ? at.context_v + e * at.context_v_row : at.own_v + (e - at.split) * at.own_v_row;
    for (int64_t c = 0; c < D; c += 16) {
      _mm512_store_ps(&run.kf[j][c], load16(key + c));
      _mm512_store_ps(&run.vf[j][c], load16(value + c));
    }
  }
  for (int64_t j = nb; j < scored; ++j) {
    for (int64_t c = 0; c < D; c += 16) _mm512_store_ps(&run.kf[j][c], zero);
  }

  // Scores: kScoreKeys keys by 32 rows in registers, over the head's dimensions.
  for (int64_t j0 = 0; j0 < scored; j0 += kScoreKeys) {
    __m512 acc[kScoreKeys][2];
    for (auto& a : acc) a[0] = a[1] = zero;
    for (int64_t c = 0; c < D; ++c) {
      const __m512 q0 = _mm512_load_ps(&run.qt[c][0]), q1 = _mm512_load_ps(&run.qt[c][16]);
      for (int64_t jj = 0; jj < kScoreKeys; ++jj) {
        const __m512 key = _mm512_set1_ps(run.kf[j0 + jj][c]);
        acc[jj][0] = _mm512_fmadd_ps(q0, key, acc[jj][0]);
        acc[jj][1] = _mm512_fmadd_ps(q1, key, acc[jj][1]);
      }
    }
    for (int64_t jj = 0; jj < kScoreKeys; ++jj) {
      _mm512_store_ps(&run.p[j0 + jj][0], acc[jj][0]);
      _mm512_store_ps(&run.p[j0 + jj][16], acc[jj][1]);
    }
  }
  if (masked) {
    const __m512i lo[2] = {_mm512_load_si512(run.lo), _mm512_load_si512(run.lo + 16)};
    const __m512i hi[2] = {_mm512_load_si512(run.hi), _mm512_load_si512(run.hi + 16)};
    for (int64_t j = 0; j < nb; ++j) {
      const int64_t e = kb + j;
      const bool padded = e < s.P && s.padding[e];
      const __m512i entry = _mm512_set1_epi32(static_cast<int32_t>(e));
      for (int h = 0; h < 2; ++h) {
        const auto lane = static_cast<__mmask16>(lanes >> (16 * h));
        const __mmask16 seen = padded ? __mmask16{0}
                                      : static_cast<__mmask16>(lane & _mm512_cmpge_epi32_mask(entry, lo[h]) &
                                                               _mm512_cmplt_epi32_mask(entry, hi[h]));
        _mm512_store_ps(&run.p[j][16 * h], _mm512_mask_mov_ps(neg_inf, seen, _mm512_load_ps(&run.p[j][16 * h])));
      }
    }
  }
  // The online softmax: a new running maximum rescales what came before. A
  // lane that sees none of the block keeps its state exactly (alpha = 1).
  for (int h = 0; h < 2; ++h) {
    __m512 block_max = neg_inf;
    for (int64_t j = 0; j < nb; ++j) block_max = _mm512_max_ps(block_max, _mm512_load_ps(&run.p[j][16 * h]));
    const __m512 m_new = _mm512_max_ps(run.m[h], block_max);
    // A row that has seen nothing yet keeps its zeros (and no -inf - -inf).
    const __m512 shift = _mm512_mask_mov_ps(m_new, _mm512_cmpeq_ps_mask(m_new, neg_inf), zero);
    const __m512 alpha = exp2_ps(_mm512_sub_ps(run.m[h], shift));
    __m512 sum = zero;
    for (int64_t j = 0; j < nb; ++j) {
      const __m512 e = exp2_ps(_mm512_sub_ps(_mm512_load_ps(&run.p[j][16 * h]), shift));
      _mm512_store_ps(&run.p[j][16 * h], e);
      sum = _mm512_add_ps(sum, e);
    }
    run.l[h] = _mm512_fmadd_ps(run.l[h], alpha, sum);
    run.m[h] = m_new;
    if (_mm512_cmpneq_ps_mask(alpha, _mm512_set1_ps(1.0f)) != 0) {
      for (int64_t c = 0; c < D; ++c) {
        _mm512_store_ps(&run.ot[c][16 * h], _mm512_mul_ps(_mm512_load_ps(&run.ot[c][16 * h]), alpha));
      }
    }
  }
  // Values: kValueDims output dimensions by 32 rows in registers, over the block's keys.
  for (int64_t c0 = 0; c0 < D; c0 += kValueDims) {
    __m512 acc[kValueDims][2];
    for (int64_t cc = 0; cc < kValueDims; ++cc) {
      acc[cc][0] = _mm512_load_ps(&run.ot[c0 + cc][0]);
      acc[cc][1] = _mm512_load_ps(&run.ot[c0 + cc][16]);
    }
    for (int64_t j = 0; j < nb; ++j) {
      const __m512 p0 = _mm512_load_ps(&run.p[j][0]), p1 = _mm512_load_ps(&run.p[j][16]);
      for (int64_t cc = 0; cc < kValueDims; ++cc) {
        const __m512 value = _mm512_set1_ps(run.vf[j][c0 + cc]);
        acc[cc][0] = _mm512_fmadd_ps(p0, value, acc[cc][0]);
        acc[cc][1] = _mm512_fmadd_ps(p1, value, acc[cc][1]);
      }
    }
    for (int64_t cc = 0; cc < kValueDims; ++cc) {
      _mm512_store_ps(&run.ot[c0 + cc][0], acc[cc][0]);
      _mm512_store_ps(&run.ot[c0 + cc][16], acc[cc][1]);
    }
  }
}

// Entries [from, to) for `lanes`, in blocks that start at multiples of
// kKeyBlock of the entry (from is one), whatever the tile and whether the
// context is shared or the sequence's own: with a lane's state untouched by
// blocks it cannot see, each row's result depends on its own entries alone,
// the same in a batch as alone, and the same as with the context's entries
// at the start of the sequence's own cache (CachePlan). shared: every lane
// may read these entries (else the lanes outside `lanes` are masked).
template <int64_t D, typename T>
KV_ATTENTION_AVX512 void attend_range(Running<D>& run, const Layout<T>& s, const Rows<T>& at, int64_t from,
                                      int64_t to, __mmask32 lanes, bool shared) {
  int64_t min_lo = to, max_lo = from, min_hi = to;
  for (int64_t r = 0; r < kTileRows; ++r) {
    if (!((lanes >> r) & 1)) continue;
    min_lo = std::min<int64_t>(min_lo, run.lo[r]), max_lo = std::max<int64_t>(max_lo, run.lo[r]);
    min_hi = std::min<int64_t>(min_hi, run.hi[r]);
  }
  for (int64_t kb = std::max(from, min_lo / kKeyBlock * kKeyBlock); kb < to; kb += kKeyBlock) {
    const int64_t nb = std::min(kb + kKeyBlock, to) - kb;
    bool padded = false;
    for (int64_t e = kb; e < std::min(kb + nb, s.P); ++e) padded = padded || s.padding[e];
    const bool masked = !shared || kb < max_lo || kb + nb > min_hi || padded;
    attend_block<D>(run, s, at, kb, nb, lanes, masked);
  }
}

template <int64_t D, typename T>
KV_ATTENTION_AVX512 void attend_tile(const Layout<T>& s, const Tile<T>& tile) {
  Running<D> run;
  for (int64_t r = 0; r < kTileRows; ++r) {
    if (r >= tile.rows) {  // an empty lane sees nothing
      for (int64_t c = 0; c < D; ++c) run.qt[c][r] = 0.0f;
      run.lo[r] = run.hi[r] = 0;
      continue;
    }
    const Own<T>& own = *tile.own[r];
    const int64_t q_head = tile.head * s.G + tile.group[r];
    const T* row = s.q + (own.first + tile.token[r]) * s.q_token + q_head * s.q_head;
    for (int64_t c = 0; c < D; ++c) run.qt[c][r] = static_cast<float>(row[c]) * s.scale;
    const int64_t end = s.S + own.L - own.n + tile.token[r] + 1;
    run.lo[r] = static_cast<int32_t>(s.window > 0 ? std::max<int64_t>(0, end - s.window) : 0);
    run.hi[r] = static_cast<int32_t>(end);
  }
  for (int h = 0; h < 2; ++h) run.m[h] = _mm512_set1_ps(-INFINITY), run.l[h] = _mm512_setzero_ps();
  const __mmask32 all = tile.rows == kTileRows ? ~__mmask32{0} : (__mmask32{1} << tile.rows) - 1;
  const bool one_sequence = tile.own[0] == tile.own[tile.rows - 1];

  const T* context_k = s.context_k ? s.context_k + tile.head * s.context_k_head : nullptr;
  const T* context_v = s.context_v ? s.context_v + tile.head * s.context_v_head : nullptr;
  // The shared context's whole blocks, read by every lane; the block that
  // ends it goes with each sequence's own first entries below.
  const int64_t shared_end = s.S / kKeyBlock * kKeyBlock;
  if (shared_end > 0) {
    const Rows<T> context{s.S, context_k, context_v, s.context_k_row, s.context_v_row, nullptr, nullptr, 0, 0};
    attend_range<D>(run, s, context, 0, shared_end, all, true);
  }
  // Each sequence's own entries, read by its lanes.
  for (int64_t r0 = 0; r0 < tile.rows;) {
    const Own<T>& own = *tile.own[r0];
    int64_t r1 = r0;
    __mmask32 lanes = 0;
    for (; r1 < tile.rows && tile.own[r1] == &own; ++r1) lanes |= __mmask32{1} << r1;
    const Rows<T> entries{s.S, context_k, context_v, s.context_k_row, s.context_v_row,
                          own.k + tile.head * own.k_head, own.v + tile.head * own.v_head, own.k_row, own.v_row};
    attend_range<D>(run, s, entries, shared_end, s.S + own.L, lanes, one_sequence);
    r0 = r1;
  }

  alignas(64) float sums[kTileRows];
  _mm512_store_ps(sums, run.l[0]);
  _mm512_store_ps(sums + 16, run.l[1]);
  for (int64_t r = 0; r < tile.rows; ++r) {
    const int64_t q_head = tile.head * s.G + tile.group[r];
    T* row = s.out + (tile.own[r]->first + tile.token[r]) * s.out_token + q_head * D;
    const float inverse = 1.0f / sums[r];
    for (int64_t c = 0; c < D; ++c) row[c] = static_cast<T>(run.ot[c][r] * inverse);
  }
}

// Every sequence's rows, head by head, packed 32 to a tile in order: a long
// sequence fills tiles of its own, short ones (branches' decoding steps)
// share one.
template <int64_t D, typename T>
void attend_all(const Layout<T>& s, const std::vector<Own<T>>& sequences, int64_t KH) {
  std::vector<Tile<T>> tiles;
  for (int64_t head = 0; head < KH; ++head) {
    Tile<T> tile;
    tile.head = head;
    for (const Own<T>& own : sequences) {
      for (int64_t row = 0; row < own.n * s.G; ++row) {
        tile.own[tile.rows] = &own;
        tile.token[tile.rows] = row / s.G;
        tile.group[tile.rows] = row % s.G;
        if (++tile.rows == kTileRows) tiles.push_back(tile), tile.rows = 0;
      }
    }
    if (tile.rows > 0) tiles.push_back(tile);
  }
  at::parallel_for(0, static_cast<int64_t>(tiles.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) attend_tile<D, T>(s, tiles[static_cast<size_t>(i)]);
  });
}

template <typename T>
void attend(const at::Tensor& q, const std::vector<AttentionSequence>& sequences, const at::Tensor& context_k,
            const at::Tensor& context_v, const at::Tensor& padding, int64_t window, at::Tensor& out) {
  const int64_t H = q.size(1), d = q.size(2), KH = sequences.front().keys.size(0);
  const bool context = context_k.defined() && context_k.size(1) > 0;
  Layout<T> s{H / KH,
              context ? context_k.size(1) : 0,
              padding.defined() ? padding.size(0) : 0,
              window,
              padding.defined() ? padding.data_ptr<bool>() : nullptr,
              q.data_ptr<T>(),
              q.stride(0),
              q.stride(1),
              context ? context_k.data_ptr<T>() : nullptr,
              context ? context_v.data_ptr<T>() : nullptr,
              context ? context_k.stride(0) : 0,
              context ? context_k.stride(1) : 0,
              context ? context_v.stride(0) : 0,
              context ? context_v.stride(1) : 0,
              out.data_ptr<T>(),
              out.stride(0),
              static_cast<float>(M_LOG2E / std::sqrt(static_cast<double>(d)))};
  std::vector<Own<T>> owns;
  for (const AttentionSequence& seq : sequences) {
    owns.push_back({seq.first, seq.n, seq.keys.size(1), seq.keys.data_ptr<T>(), seq.values.data_ptr<T>(),
                    seq.keys.stride(0), seq.keys.stride(1), seq.values.stride(0), seq.values.stride(1)});
  }
  switch (d) {
    case 64: return attend_all<64, T>(s, owns, KH);
    case 128: return attend_all<128, T>(s, owns, KH);
    default: return attend_all<256, T>(s, owns, KH);
  }
}

#endif

}  // namespace

bool cpu_attention_runs(const at::Tensor& q) {
#if defined(__x86_64__)
  const int64_t d = q.size(2);
  const bool dtype = q.scalar_type() == at::kFloat || q.scalar_type() == at::kBFloat16;
  return quant_kernels::cpu_has_avx512() && q.device().is_cpu() && dtype && (d == 64 || d == 128 || d == 256) &&
         !(at::GradMode::is_enabled() && q.requires_grad());
#else
  (void)q;
  return false;
#endif
}

void cpu_attention(const at::Tensor& q, const std::vector<AttentionSequence>& sequences, const at::Tensor& context_k,
                   const at::Tensor& context_v, const at::Tensor& padding, int64_t window, at::Tensor& out) {
  if (sequences.empty()) return;
  TORCH_CHECK(q.stride(2) == 1 && out.stride(1) == 1, "attention rows must be contiguous");
  auto check = [&](const at::Tensor& t) {
    TORCH_CHECK(!t.defined() || (t.stride(2) == 1 && t.scalar_type() == q.scalar_type()),
                "keys and values must have q's dtype and contiguous rows");
  };
  check(context_k), check(context_v);
  for (const AttentionSequence& seq : sequences) check(seq.keys), check(seq.values);
  const at::Tensor mask = padding.defined() ? padding.contiguous() : at::Tensor();
#if defined(__x86_64__)
  if (q.scalar_type() == at::kFloat) {
    attend<float>(q, sequences, context_k, context_v, mask, window, out);
  } else {
    attend<c10::BFloat16>(q, sequences, context_k, context_v, mask, window, out);
  }
#else
  (void)context_k, (void)context_v, (void)window, (void)out, (void)mask;
  TORCH_CHECK(false, "cpu_attention needs an x86-64 CPU with AVX-512");
#endif
}

}  // namespace kvframe::runtime
