// exact_integers_on_device() of gpu_test.hpp: the host generator's values, written on the GPU.
#include "gpu_test.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/generators.hpp>

namespace reduce::testing {
namespace {

/// x[i] = exact_integer_at(n, seed, i), by a grid-stride loop.
__global__ void fill_exact_integers(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = exact_integer_at(n, seed, i);
  }
}

}  // namespace

DeviceBuffer<float> exact_integers_on_device(std::size_t n, std::uint64_t seed) {
  DeviceBuffer<float> x(n);
  if (n == 0) return x;
  fill_exact_integers<<<4096, 256>>>(x.data(), n, seed);
  REDUCE_CUDA_CHECK_LAUNCH();
  // The fill ran on the legacy stream, which a lab's non-blocking stream does not wait for.
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  return x;
}

}  // namespace reduce::testing
