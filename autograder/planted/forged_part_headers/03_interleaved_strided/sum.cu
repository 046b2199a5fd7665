// Rung 3: interleaved addressing with a strided index: no divergence, but bank conflicts.
//
// Changed from rung 2: thread t works on element 2 * stride * t instead of testing t with `%`.
// The busy threads are now the lowest-numbered ones, so whole warps finish early and retire
// instead of idling lane by lane, and the division is gone. New problem: at stride s the
// threads of a warp touch addresses 2s apart, and shared memory has 32 four-byte banks, so
// from s = 1 on, two or more lanes hit the same bank and wait for each other (bank conflicts).
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void interleaved_strided(const float* __restrict__ in, std::size_t n,
                                    float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = 1; stride < kThreads; stride *= 2) {
    const unsigned index = 2 * stride * tid;
    if (index < kThreads) s[index] += s[index + stride];
    __syncthreads();
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
        interleaved_strided<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n,
                                                                                    partials);
      });
}

}  // namespace reduce
