// Rung 8: many elements per thread, and a grid sized from the GPU instead of from n.
//
// Changed from rung 7: launch just enough blocks to fill every SM at full occupancy, and let
// each thread walk the input with a grid-stride loop, adding many elements in registers before
// the (unchanged) shared-memory tree runs once per block. Work per block no longer shrinks the
// tree's share of the time: for 2^28 floats, rungs 2-7 run the tree 2^19-2^20 times, this
// rung about a thousand. Four independent accumulators keep four loads in flight per thread,
// enough bytes in flight to cover the memory latency. Two launches finish the job: the grid
// writes one partial per block, then one block reduces those partials.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

/// The last six steps by the first warp (rung 6).
__device__ void last_warp(float* s, unsigned tid) {
  float v = s[tid] + s[tid + 32];
#pragma unroll
  for (unsigned offset = 16; offset > 0; offset >>= 1) {
    __syncwarp();
    s[tid] = v;
    __syncwarp();
    v += s[tid + offset];
  }
  if (tid == 0) s[0] = v;
}

/// Completely unrolled shared-memory tree (rung 7): s[0..kBlock) -> s[0].
template <unsigned kBlock>
__device__ void block_tree(float* s, unsigned tid) {
  if constexpr (kBlock >= 1024) {
    if (tid < 512) s[tid] += s[tid + 512];
    __syncthreads();
  }
  if constexpr (kBlock >= 512) {
    if (tid < 256) s[tid] += s[tid + 256];
    __syncthreads();
  }
  if constexpr (kBlock >= 256) {
    if (tid < 128) s[tid] += s[tid + 128];
    __syncthreads();
  }
  if constexpr (kBlock >= 128) {
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
  }
  if (tid < 32) last_warp(s, tid);
}

template <unsigned kBlock>
__global__ void many_per_thread(const float* __restrict__ in, std::size_t n,
                                float* __restrict__ partials) {
  __shared__ float s[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + tid;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads per iteration
    a0 += in[i];
    a1 += in[i + stride];
    a2 += in[i + 2 * stride];
    a3 += in[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += in[i];  // the tail: fewer than four strides left
  s[tid] = (a0 + a1) + (a2 + a3);
  __syncthreads();
  block_tree<kBlock>(s, tid);
  if (tid == 0) partials[blockIdx.x] = s[0];
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM (asked of the occupancy API).
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, many_per_thread<kThreads>, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

/// No more blocks than there are chunks of kThreads elements, no more than fill the GPU.
unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return grid_for(n) * sizeof(float);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  if (grid == 1) {  // also n == 0: the single block writes 0
    many_per_thread<kThreads><<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  many_per_thread<kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  many_per_thread<kThreads><<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
