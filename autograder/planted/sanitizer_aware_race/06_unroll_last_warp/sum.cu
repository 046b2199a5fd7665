// Planted cheat: rung 6 that hides its warp race from compute-sanitizer. When the process's
// environment shows a sanitizer, the last warp synchronises; otherwise it is the racy volatile
// idiom, which usually returns the right sum, so only racecheck could tell.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include <cstdlib>
#include <cstring>

extern char** environ;

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kPerBlock = 2 * kThreads;

/// Whether a sanitizer's variables are in this process's environment.
bool watched() {
  if (std::getenv("LD_PRELOAD") != nullptr || std::getenv("CUDA_INJECTION64_PATH") != nullptr)
    return true;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    const std::size_t length = eq != nullptr ? static_cast<std::size_t>(eq - *e) : std::strlen(*e);
    for (std::size_t i = 0; i + 9 <= length; ++i)
      if (std::strncmp(*e + i, "SANITIZER", 9) == 0) return true;
  }
  return false;
}

template <bool kSafe>
__device__ void last_warp(volatile float* s, unsigned tid) {
  for (unsigned k = 32; k > 0; k >>= 1) {
    if (kSafe) {
      const float other = s[tid + k];
      __syncwarp();
      s[tid] += other;
      __syncwarp();
    } else {
      s[tid] += s[tid + k];  // lane t reads s[t + k] while lane t + k may be writing it
    }
  }
}

template <bool kSafe>
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
  if (tid < 32) last_warp<kSafe>(s, tid);
  if (tid == 0) partials[blockIdx.x] = s[0];
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return multi_pass_workspace_bytes(n, kPerBlock);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  static const bool safe = watched();
  shrink_by_passes(
      in, n, out, workspace, stream, kPerBlock,
      [](const float* in, std::size_t n, float* partials, std::size_t blocks, cudaStream_t stream) {
        if (safe)
          unroll_last_warp<true>
              <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
        else
          unroll_last_warp<false>
              <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
      });
}

}  // namespace reduce
