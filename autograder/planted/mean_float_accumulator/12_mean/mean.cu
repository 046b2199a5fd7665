// Planted bug: lab 12's mean with a single float accumulator (lab 01's naive atomic sum, then a
// division): every element is added to one float with atomicAdd. Correct for short inputs, but a
// float running sum stops growing at 2^24 (16,777,216 + 1 rounds back to 16,777,216): the mean
// of 2^30 ones comes out as 1/64.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void accumulate(const float* __restrict__ in, std::size_t n, float* total) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) atomicAdd(total, in[i]);
}

__global__ void divide(const float* total, std::size_t n, float* out) {
  *out = static_cast<float>(static_cast<double>(*total) / static_cast<double>(n));
}

}  // namespace

std::size_t mean_workspace_bytes(std::size_t n) {
  (void)n;
  return sizeof(float);  // the one accumulator
}

void mean(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  float* total = workspace.as<float>();
  REDUCE_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(float), stream));
  if (n > 0) {
    accumulate<<<static_cast<unsigned>(blocks_for(n, kThreads)), kThreads, 0, stream>>>(in, n, total);
    REDUCE_CUDA_CHECK_LAUNCH();
  }
  divide<<<1, 1, 0, stream>>>(total, n, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
