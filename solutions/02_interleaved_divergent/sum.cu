// Rung 2: tree reduction in shared memory, interleaved addressing, divergent branch.
//
// Changed from rung 1: each block loads 256 elements into shared memory and adds them as a
// binary tree (stride 1, 2, 4, ...), so only one value per block leaves the block. The
// partial results are reduced by launching the same kernel again until one value remains
// (shrink_by_passes). Slow part left for later: the test `tid % (2 * stride) == 0` keeps only
// every other, then every fourth, ... thread busy, so every warp stays active while most of
// its lanes idle (divergence), and `%` by a run-time value is an expensive integer division.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void interleaved_divergent(const float* __restrict__ in, std::size_t n,
                                      float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + tid;
  s[tid] = i < n ? in[i] : 0.0f;  // past the end: the identity of +
  __syncthreads();
  for (unsigned stride = 1; stride < kThreads; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
    __syncthreads();  // the next step reads what this one wrote
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return multi_pass_workspace_bytes(n, kThreads);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  shrink_by_passes(
      in, n, out, workspace, stream, kThreads,
      [](const float* in, std::size_t n, float* partials, std::size_t blocks, cudaStream_t stream) {
        interleaved_divergent<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n,
                                                                                      partials);
      });
}

}  // namespace reduce
