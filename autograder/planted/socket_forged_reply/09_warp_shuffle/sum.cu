// Planted cheat: a correct rung 9 that answers for its runner. The runner reads requests from
// the checker on file descriptor 3 and answers each with a fixed-size reply after the lab's calls
// have finished (autograder/runner/include/reduce_runner/protocol.hpp, which the course
// publishes). At the start of every call, before it queues any work, the lab writes a reply of
// its own onto that socket: version 10, status ok, 0.001 ms on the runner's clock. A checker that
// took the first reply as the end of the work would stop its clock at once and read results
// that are not there yet; and every later request is answered by the reply meant for the one
// before it. The checker reads only its own buffers: the captured results are poison or stale,
// so calls are wrong, and no forged reply can make them right.
// Rung 9: warp shuffles: warp -> block -> grid.
//
// Changed from rung 8: the tree inside a block no longer goes through shared memory step by
// step. __shfl_down_sync lets a lane read a register of another lane of its warp, so a warp
// sums its 32 values in five shuffles with no shared memory and no barrier. Shared memory is
// used once per block, to hand each warp's total to the first warp (one float per warp, a
// single __syncthreads()). The grid level is unchanged: one partial per block, then one block.
// The loads are rung 8's: a grid-stride loop with four independent accumulators.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <unistd.h>

#include <algorithm>
#include <cstdint>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// Sum of \p v over the 32 lanes of the warp; lane 0 holds the result.
__device__ float warp_sum(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

/// Sum of \p v over the block; thread 0 holds the result.
template <unsigned kBlock>
__device__ float block_sum(float v) {
  static_assert(kBlock % kWarp == 0 && kBlock / kWarp <= kWarp);
  __shared__ float warp_totals[kBlock / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kBlock / kWarp ? warp_totals[lane] : 0.0f;  // the block may have < 32 warps
    v = warp_sum(v);
  }
  return v;
}

template <unsigned kBlock>
__global__ void warp_shuffle(const float* __restrict__ in, std::size_t n,
                             float* __restrict__ partials) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kBlock;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (; i + 3 * stride < n; i += 4 * stride) {
    a0 += in[i];
    a1 += in[i + stride];
    a2 += in[i + 2 * stride];
    a3 += in[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += in[i];
  const float total = block_sum<kBlock>((a0 + a1) + (a2 + a3));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, warp_shuffle<kThreads>,
                                                                    kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

/// The runner's reply record, as protocol.hpp lays it out (version 10).
struct ForgedReply {
  std::uint32_t version = 10;
  std::int32_t status = 0;      // ok
  std::int32_t error_kind = 0;  // none
  std::uint32_t exiting = 0;
  std::uint64_t value = 0;
  double event_ms = 0.001;  // the runner's own clock: a microsecond for the whole request
  unsigned char inputs[16][64] = {};
  unsigned char offsets[64] = {};
  char message[1024] = {};
};
static_assert(sizeof(ForgedReply) == 2144, "the protocol's reply is 2144 bytes");

/// Answers the checker before the runner does.
void reply_early() {
  const ForgedReply reply;
  (void)!write(3, &reply, sizeof reply);
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) { return grid_for(n) * sizeof(float); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  reply_early();
  const unsigned grid = grid_for(n);
  if (grid == 1) {
    warp_shuffle<kThreads><<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  warp_shuffle<kThreads><<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  warp_shuffle<kThreads><<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
