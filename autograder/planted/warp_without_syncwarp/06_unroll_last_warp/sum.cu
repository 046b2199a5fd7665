// Planted bug: rung 6 with the warp-synchronous last warp of the classic slides (volatile,
// no __syncwarp). It usually returns the right sum, which is why racecheck must catch it.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kPerBlock = 2 * kThreads;

/// The pre-Volta idiom: a volatile pointer and no __syncwarp(). Lane t reads s[t + k] while
/// lane t + k may still be writing it: a data race under independent thread scheduling.
__device__ void last_warp(volatile float* s, unsigned tid) {
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
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

std::size_t sum_workspace_bytes(std::size_t n) { return multi_pass_workspace_bytes(n, kPerBlock); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  shrink_by_passes(in, n, out, workspace, stream, kPerBlock,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) {
                     unroll_last_warp<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
                         in, n, partials);
                   });
}

}  // namespace reduce
