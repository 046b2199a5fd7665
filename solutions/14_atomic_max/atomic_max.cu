// Lab 14 (atomic_max_apply): one thread per value, each calling the lab's atomic_max once.
//
// This is the harness the tests use to check atomic_max (atomic_max.cuh) from the host: a
// single-thread launch per value checks the sequential semantics exactly, one launch over
// millions of values checks it under contention on one address. Every thread records what
// atomic_max returned, so the tests can check the atomicMax contract (the old value) too.
#include "atomic_max.cuh"

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void apply_kernel(const float* __restrict__ values, std::size_t n, float* address,
                             float* __restrict__ old_values) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) old_values[i] = atomic_max(address, values[i]);
}

}  // namespace

void atomic_max_apply(const float* values, std::size_t n, float* address, float* old_values,
                      cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  apply_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(values, n, address,
                                                                       old_values);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
