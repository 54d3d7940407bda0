// One launch rotates and scatters every placement of a frame: blockIdx.y picks
// the placement, threads stride over its (layer, head, token, pair) elements.
// Each thread rotates one half-split pair (i, i + d/2) in fp32 the way
// runtime::Rope does on the CPU — angle = float(position) * inv_freq[i],
// accurate sincosf, then x1*cos - x2*sin and x2*cos + x1*sin with explicit
// round-to-nearest ops so nvcc cannot fuse them into FMAs that round
// differently from libtorch — and copies the pair's values when asked.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "placement_cuda.h"

namespace kvframe::kv_diff::cuda {
namespace {

template <class T>
__device__ float to_float(T x);
template <>
__device__ float to_float(float x) { return x; }
template <>
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <>
__device__ float to_float(__half x) { return __half2float(x); }

template <class T>
__device__ T from_float(float x);
template <>
__device__ float from_float(float x) { return x; }
template <>
__device__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __half from_float(float x) { return __float2half_rn(x); }

template <class T>
__global__ void place_blocks(const PlacementDesc* descs, int64_t layer_heads, int64_t capacity, int64_t half,
                             T* __restrict__ k, T* __restrict__ v, const float* __restrict__ inv_freq) {
  const PlacementDesc p = descs[blockIdx.y];
  const T* __restrict__ src_k = static_cast<const T*>(p.src_k);
  const T* __restrict__ src_v = static_cast<const T*>(p.src_v);
  const int64_t d = 2 * half;
  const int64_t total = layer_heads * p.n * half;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = e % half;
    const int64_t row = e / half;  // layer_head * n + token
    const int64_t t = row % p.n;
    const int64_t src = row * d + i;
    const int64_t dst = ((row / p.n) * capacity + p.offset + t) * d + i;

    float s, c;
    sincosf(__fmul_rn(static_cast<float>(p.position + t), inv_freq[i]), &s, &c);
    const float x1 = to_float(src_k[src]), x2 = to_float(src_k[src + half]);
    k[dst] = from_float<T>(__fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, s)));
    k[dst + half] = from_float<T>(__fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, s)));
    if (p.write_v) {
      v[dst] = src_v[src];
      v[dst + half] = src_v[src + half];
    }
  }
}

template <class T>
void launch(const LaunchArgs& a) {
  constexpr int kThreads = 256;
  constexpr int64_t kMaxBlocksX = 1024;  // enough to fill a GPU; larger blocks loop
  constexpr int64_t kMaxBlocksY = 65535; // grid.y limit: more placements go in chunks
  const int64_t half = a.head_dim / 2;
  const int64_t per_placement = (a.layer_heads * a.max_n * half + kThreads - 1) / kThreads;
  const unsigned blocks_x = static_cast<unsigned>(std::max<int64_t>(1, std::min(per_placement, kMaxBlocksX)));
  for (int64_t first = 0; first < a.count; first += kMaxBlocksY) {
    const unsigned blocks_y = static_cast<unsigned>(std::min(a.count - first, kMaxBlocksY));
    place_blocks<T><<<dim3(blocks_x, blocks_y), kThreads, 0, cudaStreamLegacy>>>(
        a.device_descs + first, a.layer_heads, a.capacity, half, static_cast<T*>(a.k), static_cast<T*>(a.v),
        a.inv_freq);
  }
}

}  // namespace

std::string launch_placements(const LaunchArgs& a) {
  if (a.count == 0) return "";
  cudaError_t err = cudaMemcpyAsync(a.device_descs, a.host_descs, a.count * sizeof(PlacementDesc),
                                    cudaMemcpyHostToDevice, cudaStreamLegacy);
  if (err != cudaSuccess) return std::string("copying placement descriptors: ") + cudaGetErrorString(err);
  switch (a.dtype) {
    case DType::kF32: launch<float>(a); break;
    case DType::kBF16: launch<__nv_bfloat16>(a); break;
    case DType::kF16: launch<__half>(a); break;
  }
  err = cudaGetLastError();
  if (err != cudaSuccess) return std::string("placement kernel launch: ") + cudaGetErrorString(err);
  return "";
}

}  // namespace kvframe::kv_diff::cuda
