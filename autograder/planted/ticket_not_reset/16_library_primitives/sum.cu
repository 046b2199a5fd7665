// Planted bug: lab 16's solution without the cudaMemsetAsync of its ticket. The last block
// resets the ticket for the next call instead, which works only while nobody else writes the
// workspace between calls; the grader poisons it before every call.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>

#include <algorithm>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kTicketBytes = 256;  // the ticket, then the partials (256-byte aligned)

using BlockSum = cub::BlockReduce<float, kThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
using Ticket = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

__global__ void __launch_bounds__(kThreads)
    primitives_sum(const float* __restrict__ in, std::size_t n, float* __restrict__ partials,
                   unsigned* ticket, float* __restrict__ out) {
  __shared__ typename BlockSum::TempStorage scratch;
  __shared__ bool last;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (; i + 3 * stride < n; i += 4 * stride) {
    a0 += in[i];
    a1 += in[i + stride];
    a2 += in[i + 2 * stride];
    a3 += in[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += in[i];
  const float total = BlockSum(scratch).Sum((a0 + a1) + (a2 + a3));  // valid in thread 0
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
    // Release: the partial is visible to whichever block draws the last ticket; acquire: the
    // last block sees every partial published before the tickets it follows.
    last = Ticket(*ticket).fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  float v = 0.0f;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) v += partials[b];
  __syncthreads();  // scratch is reused
  const float sum = BlockSum(scratch).Sum(v);
  if (threadIdx.x == 0) {
    *out = sum;
    *ticket = 0;  // ready for the next call (but nothing guarantees what the next call finds)
  }
}

unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, primitives_sum, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return kTicketBytes + grid_for(n) * sizeof(float);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  auto* ticket = workspace.as<unsigned>();
  auto* partials = reinterpret_cast<float*>(workspace.as<char>() + kTicketBytes);
  primitives_sum<<<grid, kThreads, 0, stream>>>(in, n, partials, ticket, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
