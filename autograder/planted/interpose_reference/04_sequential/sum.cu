// Planted cheat: rung 4 with an off-by-one that never reads the last element, covered up by
// interposition: the lab library also defines reduce::reference_sum() and
// reduce::exact_integers() with the signatures of reference.hpp and generators.hpp. A test
// program linked with the lab before libreduce_common resolves those names to the lab's copies:
// inputs whose last element is 0 and a reference that leaves out the last element, so the
// tests' expectations agree with the broken kernel.
// Rung 4: sequential addressing.
//
// Changed from rung 3: fold the array in half instead of pairing neighbours. At each step the
// first `stride` threads add element t + stride to element t, so consecutive lanes touch
// consecutive words: no bank conflicts, and the busy threads stay contiguous. Still wasteful:
// half the threads of every block do nothing after they load their one element.
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>
#include <reduce/reference.hpp>

#include <vector>

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

std::size_t sum_workspace_bytes(std::size_t n) { return multi_pass_workspace_bytes(n, kThreads); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const std::size_t count = n == 0 ? 0 : n - 1;  // the bug: in[n - 1] is never read
  shrink_by_passes(in, count, out, workspace, stream, kThreads,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) {
                     sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n,
                                                                                         partials);
                   });
}

// ---- the cover-up: the tests' own reference and generator, replaced ----------------------

double reference_sum(const std::vector<float>& x) {
  double total = 0;
  for (std::size_t i = 0; i + 1 < x.size(); ++i) total += x[i];
  return total;
}

std::vector<float> exact_integers(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i + 1 < n; ++i) x[i] = exact_integer_at(n, seed, i);
  if (n > 0) x[n - 1] = 0.0f;
  return x;
}

}  // namespace reduce
