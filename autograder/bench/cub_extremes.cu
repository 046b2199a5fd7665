// The cub::DeviceReduce calls of the maximum's, the minimum's, argmax's and the product's rows,
// apart from operations.cu and cub_sums.cu: the benchmark's build waits for its longest file
// (operations.cuh, CubCall).
#include "operations.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

namespace reduce::bench {
namespace {

using I = std::int64_t;

}  // namespace

cudaError_t cub_maximum(void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out,
                        cudaStream_t s) {
  return cub::DeviceReduce::Max(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
}

cudaError_t cub_minimum(void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out,
                        cudaStream_t s) {
  return cub::DeviceReduce::Min(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
}

cudaError_t cub_product(void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out,
                        cudaStream_t s) {
  return cub::DeviceReduce::Reduce(t, b, in, static_cast<float*>(out), static_cast<I>(n),
                                   cuda::std::multiplies<float>{}, 1.0f, s);
}

// CUB writes the maximum too: it goes into the row's extra scratch.
cudaError_t cub_argmax(void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                       void* out, cudaStream_t s) {
  return cub::DeviceReduce::ArgMax(t, b, in, static_cast<float*>(extra), static_cast<I*>(out),
                                   static_cast<I>(n), s);
}

}  // namespace reduce::bench
