// Planted: lab 18's reproducible sum as a double tree rounded once to float. Deterministic on one
// GPU, and far more accurate than float, but not the exact sum rounded once: 1 + 2^-24 + 2^-60
// is 1 + 2^-24 in double, which then rounds (a second time) to 1; an all -0.0 input sums to +0.0.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kBlocks = 1024;

__device__ double block_sum(double v) {
  __shared__ double warp_totals[kThreads / 32];
  for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(~0u, v, offset);
  if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? warp_totals[threadIdx.x] : 0.0;
  if (threadIdx.x < 32)
    for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(~0u, v, offset);
  return v;
}

__global__ void double_partials(const float* in, std::size_t n, double* partials) {
  double acc = 0.0;
  for (std::size_t i = blockIdx.x * std::size_t{kThreads} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * kThreads)
    acc += in[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

__global__ void double_final(const double* partials, unsigned count, float* out) {
  double acc = 0.0;
  for (unsigned b = threadIdx.x; b < count; b += kThreads) acc += partials[b];
  acc = block_sum(acc);
  if (threadIdx.x == 0) *out = static_cast<float>(acc);
}

}  // namespace

std::size_t sum_reproducible_workspace_bytes(std::size_t) {
  return kBlocks * sizeof(double);
}

void sum_reproducible(const float* in, std::size_t n, float* out, Workspace workspace,
                      cudaStream_t stream) {
  double* partials = workspace.as<double>();
  double_partials<<<kBlocks, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  double_final<<<1, kThreads, 0, stream>>>(partials, kBlocks, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
