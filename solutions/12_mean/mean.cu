// Lab 12 (mean): a sum that stays accurate for long inputs, then one careful division.
//
// The technique: rung 9's sum, with the precision placed where it matters. Each thread adds
// its grid-stride share in four float accumulators (the loads stay rung 9's, four in flight),
// so every float chain is short: about n / (4 x 270,000) elements on an H200, a few thousand
// at 2^30. Everything after that, the thread's total, the warp, the block and the grid, is
// added in double. The division happens once, in double, and only the final value is rounded
// to float.
//
// Why: a single float accumulator stops growing at 2^24 (adding 1 to 16,777,216 rounds back to
// 16,777,216), so the mean of 2^30 ones would come out as 1/64. Short float chains keep each
// partial exact or nearly so, and double partials (53-bit significands) add thousands of them
// without a visible error; the sum of 2^30 ones is then exactly 2^30 and the mean exactly 1.
// Dividing in double matters too: n above 2^24 is not always a float, so float(n) would
// already be rounded. For n == 0 the same code divides 0.0 by 0.0 and writes NaN, the mean
// of nothing (as numpy), without a special case.
//
// Cost: the doubles appear only after the loads (one conversion and a few double additions
// per thread, double shuffles in the tree), so the kernel still runs at streaming-read speed.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// Sum of \p v over the 32 lanes of the warp; lane 0 holds the result.
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

/// Sum of \p v over the block, in double; thread 0 holds the result.
template <unsigned kBlock>
__device__ double block_sum(double v) {
  static_assert(kBlock % kWarp == 0 && kBlock / kWarp <= kWarp);
  __shared__ double warp_totals[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / kWarp ? warp_totals[lane] : 0.0;
    v = warp_sum(v);
  }
  return v;
}

/// This thread's grid-stride share of in[0..n): four accumulators of type T, added in double.
template <typename T, unsigned kBlock>
__device__ double thread_total(const T* __restrict__ in, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  T a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight
    a0 += in[i];
    a1 += in[i + stride];
    a2 += in[i + 2 * stride];
    a3 += in[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += in[i];
  return (static_cast<double>(a0) + static_cast<double>(a1)) +
         (static_cast<double>(a2) + static_cast<double>(a3));
}

/// Pass 1: each block writes the double sum of its share of the input to partials[blockIdx.x].
template <unsigned kBlock>
__global__ void partial_sums(const float* __restrict__ in, std::size_t n,
                             double* __restrict__ partials) {
  const double total = block_sum<kBlock>(thread_total<float, kBlock>(in, n));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

/// Last pass, one block: sums in[0..count) (the input itself, or pass 1's partials) and writes
/// the total divided by \p n, rounded once to float. n == 0 gives 0.0 / 0.0 = NaN.
template <typename T, unsigned kBlock>
__global__ void finish_mean(const T* __restrict__ in, std::size_t count, std::size_t n,
                            float* __restrict__ out) {
  const double total = block_sum<kBlock>(thread_total<T, kBlock>(in, count));
  if (threadIdx.x == 0) *out = static_cast<float>(total / static_cast<double>(n));
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM, asked once and cached.
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, partial_sums<kThreads>,
                                                                    kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

}  // namespace

std::size_t mean_workspace_bytes(std::size_t n) {
  const unsigned grid = grid_for(n);
  return grid == 1 ? 0 : grid * sizeof(double);
}

void mean(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  if (grid == 1) {  // small inputs, n == 0 included: one block does everything
    finish_mean<float, kThreads><<<1, kThreads, 0, stream>>>(in, n, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  double* partials = workspace.as<double>();
  partial_sums<kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  finish_mean<double, kThreads><<<1, kThreads, 0, stream>>>(partials, grid, n, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
