// Planted bug: lab 10's maximum with a plain comparison in place of the NaN test: when the
// second operand is NaN, `b > a` is false and the first operand is kept, so a NaN element (always
// the second operand in the loads and the shuffles) never reaches the result.
// Lab 10 (maximum): rung 9's reduction with another operator and its identity.
//
// What changed from rung 9: the operator and the value a thread starts from. A reduction needs
// an associative operator and its identity, the value that changes nothing: 0 for +, -inf for
// max. Starting from 0 (as a sum does) is wrong as soon as every element is negative. The
// operator is the IEEE 754-2019 maximum, not `a > b ? a : b`: a NaN anywhere makes the result
// NaN, and +0.0 is larger than -0.0. Plain comparisons drop a NaN whenever it is the second
// operand (every comparison with NaN is false) and keep whichever zero came first, so their
// result would depend on the order of the tree.
//
// Why it is as fast as rung 9: the loads are unchanged (a grid-stride loop with four
// independent accumulators, a grid of SMs x resident blocks, two launches), so the kernel is
// still a streaming read. The handful of extra instructions per element for NaN and signed
// zeros costs nothing while the SM waits on memory.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cmath>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// The identity of maximum: max(-inf, x) == x for every x, NaN included.
__device__ __forceinline__ float lowest() { return -INFINITY; }

/// IEEE 754-2019 maximum: NaN if either operand is NaN; +0.0 for +0.0 against -0.0 in either
/// order; otherwise the larger. Associative and commutative, so any tree gives the same value.
__device__ __forceinline__ float max_ieee(float a, float b) {
  // Written as selects, without early returns, so that the compiler emits no branches and
  // the four loads of the grid-stride loop stay in one basic block.
  const float larger = b > a ? b : a;
  const float tied = signbit(a) ? b : a;  // a == b: the same number, or +0.0 and -0.0
  const float m = a == b ? tied : larger;
  return m;  // no NaN test: b > a is false for NaN, so the first operand wins
}

/// Maximum of \p v over the 32 lanes of the warp; lane 0 holds the result.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v = max_ieee(v, __shfl_down_sync(kFullMask, v, offset));
  return v;
}

/// Maximum of \p v over the block; thread 0 holds the result.
template <unsigned kBlock>
__device__ float block_max(float v) {
  static_assert(kBlock % kWarp == 0 && kBlock / kWarp <= kWarp);
  __shared__ float warp_results[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_max(v);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / kWarp ? warp_results[lane] : lowest();  // the identity, not 0
    v = warp_max(v);
  }
  return v;
}

/// Each block writes the maximum of its grid-stride share of in[0..n) to results[blockIdx.x].
template <unsigned kBlock>
__global__ void max_kernel(const float* __restrict__ in, std::size_t n,
                           float* __restrict__ results) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float m0 = lowest(), m1 = lowest(), m2 = lowest(), m3 = lowest();
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight
    m0 = max_ieee(m0, in[i]);
    m1 = max_ieee(m1, in[i + stride]);
    m2 = max_ieee(m2, in[i + 2 * stride]);
    m3 = max_ieee(m3, in[i + 3 * stride]);
  }
  for (; i < n; i += stride) m0 = max_ieee(m0, in[i]);
  const float m = block_max<kBlock>(max_ieee(max_ieee(m0, m1), max_ieee(m2, m3)));
  if (threadIdx.x == 0) results[blockIdx.x] = m;
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM, asked once and cached.
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, max_kernel<kThreads>,
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

std::size_t maximum_workspace_bytes(std::size_t n) {
  const unsigned grid = grid_for(n);
  return grid == 1 ? 0 : grid * sizeof(float);
}

void maximum(const float* in, std::size_t n, float* out, Workspace workspace,
             cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  if (grid == 1) {  // also n == 0: the block writes the identity, -inf
    max_kernel<kThreads><<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  max_kernel<kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  max_kernel<kThreads><<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
