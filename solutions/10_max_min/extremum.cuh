// Lab 10's reduction for maximum.cu and minimum.cu: rung 9's loads, warp shuffles and two
// launches, for an operator Op that supplies its identity, Op::identity(), and the operation,
// Op::combine(a, b). Only those two differ between the maximum and the minimum, so each .cu
// defines its Op and the rest is written once, here.
//
// Why it is as fast as rung 9: the loads are unchanged (a grid-stride loop with four
// independent accumulators, a grid of SMs x resident blocks, two launches), so the kernel is
// still a streaming read. The handful of extra instructions per element for NaN and signed
// zeros costs nothing while the SM waits on memory.
#pragma once

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cmath>

namespace reduce::extremum {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// Op over the 32 lanes of the warp; lane 0 holds the result.
template <class Op>
__device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v = Op::combine(v, __shfl_down_sync(kFullMask, v, offset));
  return v;
}

/// Op over the block; thread 0 holds the result.
template <class Op, unsigned kBlock>
__device__ float block_reduce(float v) {
  static_assert(kBlock % kWarp == 0 && kBlock / kWarp <= kWarp);
  __shared__ float warp_results[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_reduce<Op>(v);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / kWarp ? warp_results[lane] : Op::identity();  // the identity, not 0
    v = warp_reduce<Op>(v);
  }
  return v;
}

/// Each block writes Op of its grid-stride share of in[0..n) to results[blockIdx.x].
template <class Op, unsigned kBlock>
__global__ void reduce_kernel(const float* __restrict__ in, std::size_t n,
                              float* __restrict__ results) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float m0 = Op::identity(), m1 = Op::identity(), m2 = Op::identity(), m3 = Op::identity();
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight
    m0 = Op::combine(m0, in[i]);
    m1 = Op::combine(m1, in[i + stride]);
    m2 = Op::combine(m2, in[i + 2 * stride]);
    m3 = Op::combine(m3, in[i + 3 * stride]);
  }
  for (; i < n; i += stride) m0 = Op::combine(m0, in[i]);
  const float m = block_reduce<Op, kBlock>(Op::combine(Op::combine(m0, m1), Op::combine(m2, m3)));
  if (threadIdx.x == 0) results[blockIdx.x] = m;
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM, asked once and cached.
template <class Op>
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reduce_kernel<Op, kThreads>, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

/// The grid for \p n elements: one thread per element up to full_grid(), at least one block.
template <class Op>
unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid<Op>()));
}

/// Bytes of workspace for \p n elements: one partial per block, none for a single block.
template <class Op>
std::size_t workspace_bytes(std::size_t n) {
  const unsigned grid = grid_for<Op>(n);
  return grid == 1 ? 0 : grid * sizeof(float);
}

/// Writes Op of in[0..n) to *out: one launch for one block, else partials and a second launch.
template <class Op>
void run(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const unsigned grid = grid_for<Op>(n);
  if (grid == 1) {  // also n == 0: the block writes the identity
    reduce_kernel<Op, kThreads><<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  reduce_kernel<Op, kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  reduce_kernel<Op, kThreads><<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce::extremum
