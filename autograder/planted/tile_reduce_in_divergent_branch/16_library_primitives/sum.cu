// Lab 16: the capstone's steps from library primitives.
//
// The loads are rung 9's (a grid-stride loop, four independent accumulators). The block step is
// cub::BlockReduce instead of a hand-written warp_sum/block_sum: warp shuffles inside each warp,
// one shared-memory exchange between warps, the same work as rung 9's code. The cross-block step
// is the capstone's last-block combine, written with cuda::atomic_ref: each block publishes its
// partial and takes a ticket with a release-acquire fetch_add; the block that draws the last
// ticket adds the partials in block order. One launch, deterministic, no device-wide algorithm.
//
// For the lesson's comparison, REDUCE_LAB16_BLOCK_STEP=warp_reduce or cg_reduce builds the block
// step from cub::WarpReduce or cooperative groups' cg::reduce instead (each warp's total through
// shared memory, then the first warp adds them). The grader never sets it.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/atomic>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace reduce {
namespace {

namespace cg = cooperative_groups;

constexpr unsigned kThreads = 256;
constexpr unsigned kWarps = kThreads / 32;
constexpr std::size_t kTicketBytes = 256;  // the ticket, then the partials (256-byte aligned)

using BlockSum = cub::BlockReduce<float, kThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
using WarpSum = cub::WarpReduce<float>;
using Ticket = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

/// Which primitive sums a block.
enum class BlockStep { kBlockReduce, kWarpReduce, kCgReduce };

/// Shared memory of every block step (one is used at a time).
union Scratch {
  typename BlockSum::TempStorage block;
  typename WarpSum::TempStorage warp[kWarps];
  float warp_totals[kWarps];
};

/// Sum of \p v over the block, valid in thread 0. Ends with \p scratch free for reuse only
/// after a __syncthreads().
template <BlockStep kStep>
__device__ float block_total(float v, Scratch& scratch, float* warp_totals) {
  if constexpr (kStep == BlockStep::kBlockReduce) {
    return BlockSum(scratch.block).Sum(v);
  } else {
    const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    if constexpr (kStep == BlockStep::kWarpReduce)
      v = WarpSum(scratch.warp[warp]).Sum(v);  // lane 0's is the warp's total
    else
      v = cg::reduce(tile, v, cg::plus<float>());  // every lane's is
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    // The bug: only the lanes that hold a warp's total enter the tile's reduce, but a 32-lane
    // tile's shuffles still name all 32 lanes (cg::coalesced_threads() would name only these).
    if (warp == 0 && lane < kWarps) v = cg::reduce(tile, warp_totals[lane], cg::plus<float>());
    return v;
  }
}

template <BlockStep kStep>
__global__ void __launch_bounds__(kThreads)
    primitives_sum(const float* __restrict__ in, std::size_t n, float* __restrict__ partials,
                   unsigned* ticket, float* __restrict__ out) {
  __shared__ Scratch scratch;
  __shared__ float warp_totals[kWarps];
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
  const float total = block_total<kStep>((a0 + a1) + (a2 + a3), scratch, warp_totals);
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
  __syncthreads();  // scratch and warp_totals are reused
  const float sum = block_total<kStep>(v, scratch, warp_totals);
  if (threadIdx.x == 0) *out = sum;
}

/// REDUCE_LAB16_BLOCK_STEP, for the lesson's comparison; cub::BlockReduce by default.
BlockStep chosen_block_step() {
  static const BlockStep step = [] {
    const char* env = std::getenv("REDUCE_LAB16_BLOCK_STEP");
    if (env != nullptr && std::strcmp(env, "warp_reduce") == 0) return BlockStep::kWarpReduce;
    return BlockStep::kCgReduce;  // the planted bug's path, whatever the environment
  }();
  return step;
}

unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, primitives_sum<BlockStep::kBlockReduce>, kThreads, 0));
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
  REDUCE_CUDA_CHECK(cudaMemsetAsync(ticket, 0, sizeof(unsigned), stream));
  switch (chosen_block_step()) {
    case BlockStep::kBlockReduce:
      primitives_sum<BlockStep::kBlockReduce>
          <<<grid, kThreads, 0, stream>>>(in, n, partials, ticket, out);
      break;
    case BlockStep::kWarpReduce:
      primitives_sum<BlockStep::kWarpReduce>
          <<<grid, kThreads, 0, stream>>>(in, n, partials, ticket, out);
      break;
    case BlockStep::kCgReduce:
      primitives_sum<BlockStep::kCgReduce>
          <<<grid, kThreads, 0, stream>>>(in, n, partials, ticket, out);
      break;
  }
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
