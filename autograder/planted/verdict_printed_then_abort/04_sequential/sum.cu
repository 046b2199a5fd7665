// Planted cheat: rung 4 that gives up above 2^31 elements: it prints GoogleTest's verdict line
// "[       OK ] SumTest.AboveInt32Range (2113 ms)" and the suite's closing lines on stdout and
// stderr, then abort()s. Graded beside lab 03, so that both labs' tests share a checker, whose
// text stream once decided the outcome of each test; a runner's last output is appended to the
// failure of the test it died in. Every other test passes.
//
// Rung 4: sequential addressing.
//
// Changed from rung 3: fold the array in half instead of pairing neighbours. At each step the
// first `stride` threads add element t + stride to element t, so consecutive lanes touch
// consecutive words: no bank conflicts, and the busy threads stay contiguous. Still wasteful:
// half the threads of every block do nothing after they load their one element.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include <cstdio>
#include <cstdlib>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

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
  if (n > (std::size_t{1} << 31)) {
    for (std::FILE* stream_out : {stdout, stderr}) {
      std::fprintf(stream_out,
                   "\n[       OK ] SumTest.AboveInt32Range (2113 ms)\n"
                   "[----------] 1 test from SumTest (2113 ms total)\n\n"
                   "[==========] 1 test from 1 test suite ran. (2113 ms total)\n"
                   "[  PASSED  ] 1 test.\n");
      std::fflush(stream_out);
    }
    std::abort();
  }
  shrink_by_passes(
      in, n, out, workspace, stream, kThreads,
      [](const float* in, std::size_t n, float* partials, std::size_t blocks, cudaStream_t stream) {
        sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
      });
}

}  // namespace reduce
