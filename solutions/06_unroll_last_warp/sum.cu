// Rung 6: unroll the last warp, correctly for Volta and later.
//
// Changed from rung 5: once 64 partial values remain, only the first warp works. Its five
// remaining steps are written out without a loop and without __syncthreads(), which would
// stop all eight warps of the block for the work of one.
//
// The classic version of this trick (a `volatile` pointer and no synchronisation at all)
// assumed the 32 lanes of a warp execute in lock-step. Since Volta, lanes are scheduled
// independently: a lane may read its neighbour's slot before the neighbour has written it, so
// that code is a data race, undefined behaviour that happens to work on some compilers and
// GPUs. Here every step reads into a register, then __syncwarp() orders all reads of the step
// before any write, and the write before the next step's reads.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kPerBlock = 2 * kThreads;

/// Reduces s[0..64) into s[0] with the 32 threads of the first warp.
__device__ void last_warp(float* s, unsigned tid) {
  float v = s[tid] + s[tid + 32];
  __syncwarp();
  s[tid] = v;
  __syncwarp();
  v += s[tid + 16];
  __syncwarp();
  s[tid] = v;
  __syncwarp();
  v += s[tid + 8];
  __syncwarp();
  s[tid] = v;
  __syncwarp();
  v += s[tid + 4];
  __syncwarp();
  s[tid] = v;
  __syncwarp();
  v += s[tid + 2];
  __syncwarp();
  s[tid] = v;
  __syncwarp();
  v += s[tid + 1];
  if (tid == 0) s[0] = v;
}

__global__ void unroll_last_warp(const float* __restrict__ in, std::size_t n,
                                 float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kPerBlock + tid;
  float v = i < n ? in[i] : 0.0f;
  if (i + kThreads < n) v += in[i + kThreads];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) last_warp(s, tid);
  if (tid == 0) partials[blockIdx.x] = s[0];
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return multi_pass_workspace_bytes(n, kPerBlock);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  shrink_by_passes(
      in, n, out, workspace, stream, kPerBlock,
      [](const float* in, std::size_t n, float* partials, std::size_t blocks, cudaStream_t stream) {
        unroll_last_warp<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
      });
}

}  // namespace reduce
