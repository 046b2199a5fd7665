// Planted attack on the reader's tools: correct rung 4 whose block size lives in a header whose
// file name holds, as UTF-8, the C1 controls OSC (U+009D) "0;all tests passed" ST (U+009C), a
// window title for terminals that obey C1 controls, then a right-to-left override (U+202E)
// before "huc.lenrek.cuh", shown reversed. Every byte is 0x80 or above: no control character of
// the ASCII range, so staging takes it, and the lab is graded as the correct rung 4 it is.
//
// Rung 4: sequential addressing.
//
// Changed from rung 3: fold the array in half instead of pairing neighbours. At each step the
// first `stride` threads add element t + stride to element t, so consecutive lanes touch
// consecutive words: no bank conflicts, and the busy threads stay contiguous. Still wasteful:
// half the threads of every block do nothing after they load their one element.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include "0;all tests passed‮huc.lenrek.cuh"

namespace reduce {
namespace {

constexpr unsigned kThreads = kBlockThreads;

__global__ void sequential(const float* __restrict__ in, std::size_t n,
                           float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
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
        sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
      });
}

}  // namespace reduce
