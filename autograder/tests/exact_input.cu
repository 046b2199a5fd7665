// The *_on_device() fills of gpu_test.hpp: the host generators' values, written on the GPU.
#include "gpu_test.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/generators.hpp>

namespace reduce::testing {
namespace {

/// x[i] = value_at(i), by a grid-stride loop.
template <typename ValueAt>
__global__ void fill_by_index(float* x, std::size_t n, ValueAt value_at) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = value_at(i);
  }
}

/// A device array of value_at(0), ..., value_at(n - 1), complete when this returns.
template <typename ValueAt>
DeviceBuffer<float> on_device(std::size_t n, ValueAt value_at) {
  DeviceBuffer<float> x(n);
  if (n == 0) return x;
  fill_by_index<<<4096, 256>>>(x.data(), n, value_at);
  REDUCE_CUDA_CHECK_LAUNCH();
  // The fill ran on the legacy stream, which a lab's non-blocking stream does not wait for.
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  return x;
}

/// exact_integer_at() of an input of n elements.
struct ExactIntegerAt {
  std::size_t n;
  std::uint64_t seed;
  __device__ float operator()(std::size_t i) const { return exact_integer_at(n, seed, i); }
};

/// all_negative_at(), negated for the minimum's mirror image (exact: no NaN among them).
struct AllNegativeAt {
  std::uint64_t seed;
  bool negate;
  __device__ float operator()(std::size_t i) const {
    const float v = all_negative_at(seed, i);
    return negate ? -v : v;
  }
};

/// signed_mix_at().
struct SignedMixAt {
  std::uint64_t seed;
  double zero_fraction, inf_fraction;
  __device__ float operator()(std::size_t i) const {
    return signed_mix_at(seed, i, zero_fraction, inf_fraction);
  }
};

/// exact_product_sign_at().
struct ExactProductSignAt {
  std::uint64_t seed;
  __device__ float operator()(std::size_t i) const { return exact_product_sign_at(seed, i); }
};

}  // namespace

DeviceBuffer<float> exact_integers_on_device(std::size_t n, std::uint64_t seed) {
  return on_device(n, ExactIntegerAt{n, seed});
}

DeviceBuffer<float> all_negative_on_device(std::size_t n, std::uint64_t seed, bool negate) {
  return on_device(n, AllNegativeAt{seed, negate});
}

DeviceBuffer<float> signed_mix_on_device(std::size_t n, std::uint64_t seed, double zero_fraction,
                                         double inf_fraction) {
  return on_device(n, SignedMixAt{seed, zero_fraction, inf_fraction});
}

DeviceBuffer<float> exact_product_factors_on_device(std::size_t n, std::uint64_t seed) {
  DeviceBuffer<float> x = on_device(n, ExactProductSignAt{seed});
  // In the generator's order, so that a place drawn twice keeps the later value.
  for (const PlacedFactor& f : exact_product_scales(n, seed))
    set_element(x.data(), f.index, f.value);
  return x;
}

}  // namespace reduce::testing
