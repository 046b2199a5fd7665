// Rung 5: first add during load.
//
// Changed from rung 4: each thread loads two elements, one block-width apart, and adds them
// before writing shared memory. A block now covers 2 * 256 elements, so half as many blocks
// (and half the idle threads) do the same work, and the first tree step costs no shared-memory
// round trip.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kPerBlock = 2 * kThreads;

__global__ void first_add_load(const float* __restrict__ in, std::size_t n,
                               float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kPerBlock + tid;
  float v = i < n ? in[i] : 0.0f;
  if (i + kThreads < n) v += in[i + kThreads];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
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
        first_add_load<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
      });
}

}  // namespace reduce
