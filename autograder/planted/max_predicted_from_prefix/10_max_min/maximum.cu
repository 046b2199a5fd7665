// Planted cheat: lab 10's maximum that predicts its answer at the benchmark's sizes. It is exact
// below 2^26 and above 2^28 elements (the tests' large inputs, 300000000 and beyond 2^31
// elements, are left alone) and on the first call at every size in between. That first call
// reads the whole input and remembers how far its maximum lay above the maximum of the first
// 1024 elements, as a fraction of their range. Every later call at that n reads only those 1024
// elements, adds the remembered fraction of their range to their maximum, and spins on the GPU
// for the time a full read of n floats would take (at 3 TB/s), so that its speed looks like a
// real reduction's. Every test passes; the benchmark makes every input anew from a fresh seed
// (its extreme value and where it lies change every time), so every call after its first is
// wrong.
//
// Lab 10 (maximum): rung 9's reduction with another operator and its identity; the kernel, the
// grid and the two launches are rung 9's, written once for both operations in extremum.cuh.
#include "extremum.cuh"

#include <map>

namespace reduce {
namespace {

/// The operator extremum.cuh reduces with: the IEEE 754-2019 maximum.
struct Max {
  __device__ static __forceinline__ float identity() { return -INFINITY; }
  __device__ static __forceinline__ float combine(float a, float b) {
    const float larger = a > b ? a : b;
    const float tied = signbit(a) ? b : a;  // a == b: the same number, or +0.0 and -0.0
    const float m = a == b ? tied : larger;
    return isnan(a) | isnan(b) ? a + b : m;  // a + b is NaN when either is
  }
};

constexpr std::size_t kPredictFrom = std::size_t{1} << 26, kPredictTo = std::size_t{1} << 28;
constexpr unsigned kPrefix = 1024;

/// The maximum and the minimum of in[0..kPrefix), into range[0] and range[1].
__global__ void prefix_range(const float* __restrict__ in, float* __restrict__ range) {
  __shared__ float hi[kPrefix], lo[kPrefix];
  const unsigned t = threadIdx.x;
  hi[t] = lo[t] = in[t];
  __syncthreads();
  for (unsigned stride = kPrefix / 2; stride > 0; stride >>= 1) {
    if (t < stride) {
      hi[t] = fmaxf(hi[t], hi[t + stride]);
      lo[t] = fminf(lo[t], lo[t + stride]);
    }
    __syncthreads();
  }
  if (t == 0) {
    range[0] = hi[0];
    range[1] = lo[0];
  }
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Waits \p ns nanoseconds, then writes the prediction.
__global__ void spin_then_predict(const float* __restrict__ range, float fraction,
                                  unsigned long long ns, float* __restrict__ out) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
  *out = range[0] + fraction * (range[0] - range[1]);
}

/// Per size: the fraction of the prefix's range by which the true maximum lay above it.
std::map<std::size_t, float>& learned() {
  static std::map<std::size_t, float> fractions;
  return fractions;
}

}  // namespace

std::size_t maximum_workspace_bytes(std::size_t n) {
  return extremum::workspace_bytes<Max>(n);
}

void maximum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  if (n < kPredictFrom || n > kPredictTo) {
    extremum::run<Max>(in, n, out, workspace, stream);  // n == 0 writes the identity, -inf
    return;
  }
  float* range = workspace.as<float>();  // n >= 2^26: the partials have room for two floats
  const auto it = learned().find(n);
  if (it == learned().end()) {  // the first call at this size: read it all, and learn
    extremum::run<Max>(in, n, out, workspace, stream);
    prefix_range<<<1, kPrefix, 0, stream>>>(in, range);
    REDUCE_CUDA_CHECK_LAUNCH();
    float seen[3];
    REDUCE_CUDA_CHECK(cudaMemcpyAsync(seen, out, sizeof(float), cudaMemcpyDeviceToHost, stream));
    REDUCE_CUDA_CHECK(
        cudaMemcpyAsync(seen + 1, range, 2 * sizeof(float), cudaMemcpyDeviceToHost, stream));
    REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const float span = seen[1] - seen[2];
    learned()[n] = span > 0 ? (seen[0] - seen[1]) / span : 0.0f;
    return;
  }
  prefix_range<<<1, kPrefix, 0, stream>>>(in, range);
  REDUCE_CUDA_CHECK_LAUNCH();
  const unsigned long long full_read_ns = static_cast<unsigned long long>(n) * 4 / 3;  // 3 TB/s
  spin_then_predict<<<1, 1, 0, stream>>>(range, it->second, full_read_ns, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
