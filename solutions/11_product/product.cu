// Lab 11 (product): rung 9's reduction with * and its identity, 1.
//
// What changed from rung 9: the operator and the starting value. The identity of * is 1; a
// thread that sees no element, a lane beyond the block's warps and an empty input contribute
// 1, never the 0 of a sum (which would zero the product).
//
// What the order of the tree does to a product: every multiplication rounds the whole product
// once, whatever the order, so a loop and a tree have the same worst-case rounding error (n - 1
// roundings). Overflow and underflow, however, depend on the order: a partial product can
// leave float's range and come back as inf or 0 although the exact product is representable,
// and another order may never leave the range. This kernel multiplies, per thread, elements
// i, i + 4S, i + 8S, ... (S = the grid's thread count) into one accumulator and i + S,
// i + 5S, ... into the next; then the four accumulators pairwise, then the warp, the block and
// the grid. The lab's contract accepts whatever IEEE arithmetic gives in this order.
//
// Speed: the loads are rung 9's, so the kernel runs at streaming-read bandwidth; one multiply
// per element is far below what the SM can issue while it waits on memory.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// Product of \p v over the 32 lanes of the warp; lane 0 holds the result.
__device__ __forceinline__ float warp_product(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v *= __shfl_down_sync(kFullMask, v, offset);
  return v;
}

/// Product of \p v over the block; thread 0 holds the result.
template <unsigned kBlock>
__device__ float block_product(float v) {
  static_assert(kBlock % kWarp == 0 && kBlock / kWarp <= kWarp);
  __shared__ float warp_results[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_product(v);
  if (lane == 0) warp_results[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / kWarp ? warp_results[lane] : 1.0f;  // the identity of *, not 0
    v = warp_product(v);
  }
  return v;
}

/// Each block writes the product of its grid-stride share of in[0..n) to results[blockIdx.x].
template <unsigned kBlock>
__global__ void product_kernel(const float* __restrict__ in, std::size_t n,
                               float* __restrict__ results) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float p0 = 1.0f, p1 = 1.0f, p2 = 1.0f, p3 = 1.0f;
  for (; i + 3 * stride < n; i += 4 * stride) {  // four independent loads in flight
    p0 *= in[i];
    p1 *= in[i + stride];
    p2 *= in[i + 2 * stride];
    p3 *= in[i + 3 * stride];
  }
  for (; i < n; i += stride) p0 *= in[i];
  const float p = block_product<kBlock>((p0 * p1) * (p2 * p3));
  if (threadIdx.x == 0) results[blockIdx.x] = p;
}

/// Blocks that fill the GPU once: SMs x resident blocks per SM, asked once and cached.
unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, product_kernel<kThreads>, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

}  // namespace

std::size_t product_workspace_bytes(std::size_t n) {
  const unsigned grid = grid_for(n);
  return grid == 1 ? 0 : grid * sizeof(float);
}

void product(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  if (grid == 1) {  // also n == 0: the block writes the identity, 1
    product_kernel<kThreads><<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  product_kernel<kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  product_kernel<kThreads><<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
