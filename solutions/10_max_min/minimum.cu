// Lab 10 (minimum): the mirror image of maximum.cu.
//
// Same structure as maximum.cu (rung 9's loads, warp shuffles, two launches); only the
// operator and the identity change. The identity of minimum is +inf. The operator is the
// IEEE 754-2019 minimum: a NaN anywhere makes the result NaN, and -0.0 is smaller than +0.0,
// so the minimum of {+0.0, -0.0} is -0.0 in any order.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cmath>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// The identity of minimum: min(+inf, x) == x for every x, NaN included.
__device__ __forceinline__ float highest() { return INFINITY; }

/// IEEE 754-2019 minimum: NaN if either operand is NaN; -0.0 for +0.0 against -0.0 in either
/// order; otherwise the smaller. Associative and commutative, so any tree gives the same value.
__device__ __forceinline__ float min_ieee(float a, float b) {
  // Selects, no early returns: no branches in the hot loop (see maximum.cu).
  const float smaller = a < b ? a : b;
  const float tied = signbit(a) ? a : b;  // a == b: the same number, or +0.0 and -0.0
  const float m = a == b ? tied : smaller;
  return isnan(a) | isnan(b) ? a + b : m;  // a + b is NaN when either is
}

/// Minimum of \p v over the 32 lanes of the warp; lane 0 holds the result.
__device__ __forceinline__ float warp_min(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v = min_ieee(v, __shfl_down_sync(kFullMask, v, offset));
  return v;
}

/// Minimum of \p v over the block; thread 0 holds the result.
template <unsigned kBlock>
__device__ float block_min(float v) {
  static_assert(kBlock % kWarp == 0 && kBlock / kWarp <= kWarp);
  __shared__ float warp_results[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_min(v);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / kWarp ? warp_results[lane] : highest();  // the identity, not 0
    v = warp_min(v);
  }
  return v;
}

/// Each block writes the minimum of its grid-stride share of in[0..n) to results[blockIdx.x].
template <unsigned kBlock>
__global__ void min_kernel(const float* __restrict__ in, std::size_t n,
                           float* __restrict__ results) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float m0 = highest(), m1 = highest(), m2 = highest(), m3 = highest();
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight
    m0 = min_ieee(m0, in[i]);
    m1 = min_ieee(m1, in[i + stride]);
    m2 = min_ieee(m2, in[i + 2 * stride]);
    m3 = min_ieee(m3, in[i + 3 * stride]);
  }
  for (; i < n; i += stride) m0 = min_ieee(m0, in[i]);
  const float m = block_min<kBlock>(min_ieee(min_ieee(m0, m1), min_ieee(m2, m3)));
  if (threadIdx.x == 0) results[blockIdx.x] = m;
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM, asked once and cached.
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, min_kernel<kThreads>,
                                                                    kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

}  // namespace

std::size_t minimum_workspace_bytes(std::size_t n) {
  const unsigned grid = grid_for(n);
  return grid == 1 ? 0 : grid * sizeof(float);
}

void minimum(const float* in, std::size_t n, float* out, Workspace workspace,
             cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  if (grid == 1) {  // also n == 0: the block writes the identity, +inf
    min_kernel<kThreads><<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  min_kernel<kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  min_kernel<kThreads><<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
