// Lab 14 (maximum): one launch; every block finishes with one atomic_max on the output.
//
// What changed from lab 10: the grid level. Lab 10 writes one partial per block and reduces
// them in a second launch; here thread 0 of each block folds its block's maximum straight into
// *out with the lab's float atomic_max (atomic_max.cuh). About a thousand atomics on one
// address cost little next to reading the input, and no workspace is needed.
//
// The output must hold the identity of max, -inf, before the first atomic: the contract hands
// over a garbage output (the tests fill it with 0xFF bytes). cudaMemsetAsync cannot write
// -inf (0xFF800000 is not one byte repeated), so a one-thread kernel writes it, on the same
// stream, before the main kernel. Zeroing it with cudaMemsetAsync(out, 0, ...) instead, the
// usual trick for an atomic sum, would be wrong: 0 is the identity of +, not of max, and for
// an input whose elements are all negative every block's maximum loses to the 0 already there,
// so the result would be 0. It would also turn the maximum of no elements into 0, not -inf.
//
// NaN and signed zeros: the block maximum follows IEEE 754-2019 (as in lab 10) and atomic_max
// keeps that order across blocks (a NaN is stored as the canonical NaN 0x7FFFFFFF).
#include "atomic_max.cuh"

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cmath>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// IEEE 754-2019 maximum of two floats (lab 10): NaN wins, +0.0 beats -0.0.
__device__ __forceinline__ float max_ieee(float a, float b) {
  // Written as selects, without early returns, so that the compiler emits no branches and
  // the four loads of the grid-stride loop stay in one basic block.
  const float larger = a > b ? a : b;
  const float tied = signbit(a) ? b : a;  // a == b: the same number, or +0.0 and -0.0
  const float m = a == b ? tied : larger;
  return isnan(a) | isnan(b) ? a + b : m;  // a + b is NaN when either is
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
    v = lane < kBlock / kWarp ? warp_results[lane] : -INFINITY;
    v = warp_max(v);
  }
  return v;
}

/// Writes the identity of max to *out (cudaMemsetAsync can only repeat one byte).
__global__ void set_lowest(float* out) {
  *out = -INFINITY;
}

/// Each block folds the maximum of its grid-stride share of in[0..n) into *out.
template <unsigned kBlock>
__global__ void max_atomic_kernel(const float* __restrict__ in, std::size_t n, float* out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight
    m0 = max_ieee(m0, in[i]);
    m1 = max_ieee(m1, in[i + stride]);
    m2 = max_ieee(m2, in[i + 2 * stride]);
    m3 = max_ieee(m3, in[i + 3 * stride]);
  }
  for (; i < n; i += stride) m0 = max_ieee(m0, in[i]);
  const float m = block_max<kBlock>(max_ieee(max_ieee(m0, m1), max_ieee(m2, m3)));
  if (threadIdx.x == 0) atomic_max(out, m);
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM, asked once and cached.
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, max_atomic_kernel<kThreads>, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

}  // namespace

std::size_t maximum_workspace_bytes(std::size_t n) {
  (void)n;
  return 0;  // the atomics need no scratch memory
}

void maximum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  (void)workspace;
  set_lowest<<<1, 1, 0, stream>>>(out);
  REDUCE_CUDA_CHECK_LAUNCH();
  if (n == 0) return;  // the maximum of no elements is -inf, already in place
  const unsigned grid =
      static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
  max_atomic_kernel<kThreads><<<grid, kThreads, 0, stream>>>(in, n, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
