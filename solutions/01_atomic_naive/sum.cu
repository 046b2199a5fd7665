// Rung 1: naive atomic sum.
//
// Every thread adds its one element straight into the single output float with atomicAdd.
// It is correct (the atomic makes each read-modify-write indivisible) but every one of the n
// additions queues on the same address, so the hardware performs them one after another: the
// GPU's parallelism is spent waiting in line. Everything after this rung exists to avoid that.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void atomic_sum(const float* __restrict__ in, std::size_t n, float* out) {
  // size_t: with more than 2^31 elements an int index would overflow.
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t) {
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  // The output accumulates, so it must start at zero on every call.
  REDUCE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>(blocks_for(n, kThreads));
  atomic_sum<<<blocks, kThreads, 0, stream>>>(in, n, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
