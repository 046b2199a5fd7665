// Rung 7: complete unrolling with the block size as a template parameter.
//
// Changed from rung 6: the block size is a compile-time constant, so every step of the tree is
// written out and the steps a given block size does not need vanish at compile time
// (`if constexpr`). No loop counter, no loop branch, no comparison of a run-time stride. The
// host picks the instantiation with a switch, turning a run-time choice into a constant.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

// The block size this lab launches; any power of 2 in [64, 1024].
constexpr unsigned kThreads = 256;

/// The last six steps, s[0..64) -> s[0], by the first warp (see rung 6 for the __syncwarp()s).
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

template <unsigned kBlock>
__global__ void complete_unroll(const float* __restrict__ in, std::size_t n,
                                float* __restrict__ partials) {
  static_assert(kBlock >= 64 && kBlock <= 1024 && (kBlock & (kBlock - 1)) == 0);
  __shared__ float s[kBlock];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * (2 * kBlock) + tid;
  float v = i < n ? in[i] : 0.0f;
  if (i + kBlock < n) v += in[i + kBlock];
  s[tid] = v;
  __syncthreads();
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
  if (tid == 0) partials[blockIdx.x] = s[0];
}

/// Launches the instantiation for \p threads threads per block.
void launch(unsigned threads, const float* in, std::size_t n, float* partials, std::size_t blocks,
            cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(blocks);
  switch (threads) {
    case 1024:
      complete_unroll<1024><<<grid, 1024, 0, stream>>>(in, n, partials);
      break;
    case 512:
      complete_unroll<512><<<grid, 512, 0, stream>>>(in, n, partials);
      break;
    case 256:
      complete_unroll<256><<<grid, 256, 0, stream>>>(in, n, partials);
      break;
    case 128:
      complete_unroll<128><<<grid, 128, 0, stream>>>(in, n, partials);
      break;
    case 64:
      complete_unroll<64><<<grid, 64, 0, stream>>>(in, n, partials);
      break;
    default:
      throw std::invalid_argument("block size must be a power of 2 in [64, 1024]");
  }
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return multi_pass_workspace_bytes(n, 2 * kThreads);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  shrink_by_passes(in, n, out, workspace, stream, 2 * kThreads,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) { launch(kThreads, in, n, partials, blocks, stream); });
}

}  // namespace reduce
