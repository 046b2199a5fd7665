// The cub::DeviceReduce calls of the sums' rows (sum, mean, the compensated sum), apart from
// operations.cu: each file that instantiates CUB takes seconds to compile, and the benchmark's
// build waits for its longest file (operations.cuh, CubCall).
#include "operations.cuh"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

namespace reduce::bench {
namespace {

using I = std::int64_t;

__global__ void divide_by(float* value, double n) {
  *value = static_cast<float>(*value / n);
}

/// CUB's transformation for a sum in double.
struct ToDouble {
  __device__ double operator()(float v) const { return v; }
};

/// Converts CUB's double sum (in the row's extra scratch) to the float result.
__global__ void round_to_float(const double* sum, float* out) {
  *out = static_cast<float>(*sum);
}

}  // namespace

cudaError_t cub_sum(void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out,
                    cudaStream_t s) {
  return cub::DeviceReduce::Sum(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
}

cudaError_t cub_mean(void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                     void* out, cudaStream_t s) {
  const cudaError_t status = cub_sum(t, b, extra, in, n, out, s);
  if (t == nullptr || status != cudaSuccess) return status;
  divide_by<<<1, 1, 0, s>>>(static_cast<float*>(out), static_cast<double>(n));
  return cudaGetLastError();
}

// CUB accumulates in double (TransformReduce with a conversion), then rounds once.
cudaError_t cub_sum_compensated(void* t, std::size_t& b, void* extra, const float* in,
                                std::size_t n, void* out, cudaStream_t s) {
  const cudaError_t status =
      cub::DeviceReduce::TransformReduce(t, b, in, static_cast<double*>(extra), static_cast<I>(n),
                                         cuda::std::plus<double>{}, ToDouble{}, 0.0, s);
  if (t == nullptr || status != cudaSuccess) return status;
  round_to_float<<<1, 1, 0, s>>>(static_cast<const double*>(extra), static_cast<float*>(out));
  return cudaGetLastError();
}

}  // namespace reduce::bench
