// Lab 17: a segmented (row-wise) sum, with the strategy chosen per segment by its length.
//
// The offsets live on the device and the call must not wait for them, so the host cannot sort
// the segments by length; the kernels do it themselves, in three tiers:
//   short (up to kWarpMax elements): one warp per segment, in the first kernel, which also
//     appends every longer segment to one of two work lists (an atomic counter each);
//   medium (up to kBlockMax): one block per listed segment, blocks taking segments in turn;
//   long: every block of the grid takes a chunk of each listed segment in turn (split rows),
//     writes one partial per (segment, block), and one warp per segment adds the partials in
//     block order.
// Each segment's result is computed in a fixed order (a list's order may change from run to run,
// but a segment's own tree does not), so the sums are the same on every run.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cstdint>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr std::int64_t kWarpMax = 1024;      // longest segment one warp sums
constexpr std::int64_t kBlockMax = 1 << 18;  // longest segment one block sums
constexpr unsigned kSplitBlocks = 1024;      // blocks that share a long segment

/// The workspace: two list counters, then the two lists, then the long segments' partials.
struct Layout {
  std::size_t medium_list = 256, long_list = 0, partials = 0, bytes = 0;
  Layout(std::size_t n, std::size_t segments) {
    const std::size_t longs = std::min(segments, n / static_cast<std::size_t>(kBlockMax) + 1);
    long_list = medium_list + segments * sizeof(std::uint32_t);
    partials = (long_list + longs * sizeof(std::uint32_t) + 255) / 256 * 256;
    bytes = partials + longs * kSplitBlocks * sizeof(float);
  }
};

__device__ float warp_sum(float v) {
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

/// Sum over the block; thread 0 holds it. Every thread must call it.
__device__ float block_sum(float v) {
  __shared__ float warp_totals[kThreads / kWarp];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // warp_totals may still be read from the previous call
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / kWarp ? warp_totals[threadIdx.x] : 0.0f;
  return warp < 1 ? warp_sum(v) : v;
}

/// Short segments, one warp each; longer ones go to the medium or the long list.
__global__ void short_segments(const float* __restrict__ in,
                               const std::int64_t* __restrict__ offsets, std::size_t segments,
                               float* __restrict__ out, unsigned* __restrict__ counters,
                               std::uint32_t* __restrict__ medium,
                               std::uint32_t* __restrict__ longs) {
  const std::size_t s = (static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (s >= segments) return;  // a whole warp leaves together
  const std::int64_t begin = offsets[s], end = offsets[s + 1];
  const std::int64_t length = end - begin;
  if (length > kWarpMax) {
    if (lane == 0) {
      if (length > kBlockMax)
        longs[atomicAdd(&counters[1], 1u)] = static_cast<std::uint32_t>(s);
      else
        medium[atomicAdd(&counters[0], 1u)] = static_cast<std::uint32_t>(s);
    }
    return;
  }
  float v = 0.0f;
  for (std::int64_t i = begin + lane; i < end; i += kWarp) v += in[i];
  v = warp_sum(v);
  if (lane == 0) out[s] = v;
}

/// Medium segments: block b takes listed segments b, b + gridDim.x, ...
__global__ void medium_segments(const float* __restrict__ in,
                                const std::int64_t* __restrict__ offsets, float* __restrict__ out,
                                const unsigned* __restrict__ counters,
                                const std::uint32_t* __restrict__ medium) {
  const unsigned count = counters[0];
  for (unsigned k = blockIdx.x; k < count; k += gridDim.x) {
    const std::uint32_t s = medium[k];
    const std::int64_t begin = offsets[s], end = offsets[s + 1];
    float a0 = 0.0f, a1 = 0.0f;
    std::int64_t i = begin + threadIdx.x;
    for (; i + kThreads < end; i += 2 * kThreads) a0 += in[i], a1 += in[i + kThreads];
    if (i < end) a0 += in[i];
    const float total = block_sum(a0 + a1);
    if (threadIdx.x == 0) out[s] = total;
  }
}

/// Long segments: block b sums chunk b of every listed segment.
__global__ void long_partials(const float* __restrict__ in,
                              const std::int64_t* __restrict__ offsets,
                              const unsigned* __restrict__ counters,
                              const std::uint32_t* __restrict__ longs,
                              float* __restrict__ partials) {
  const unsigned count = counters[1];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (unsigned k = 0; k < count; ++k) {
    const std::uint32_t s = longs[k];
    const std::int64_t begin = offsets[s], end = offsets[s + 1];
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    std::int64_t i = begin + static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
    for (; i + 3 * stride < end; i += 4 * stride) {
      a0 += in[i];
      a1 += in[i + stride];
      a2 += in[i + 2 * stride];
      a3 += in[i + 3 * stride];
    }
    for (; i < end; i += stride) a0 += in[i];
    const float total = block_sum((a0 + a1) + (a2 + a3));
    if (threadIdx.x == 0) partials[static_cast<std::size_t>(k) * gridDim.x + blockIdx.x] = total;
  }
}

/// One warp per long segment adds its partials, in block order.
__global__ void long_totals(float* __restrict__ out, const unsigned* __restrict__ counters,
                            const std::uint32_t* __restrict__ longs,
                            const float* __restrict__ partials, unsigned blocks) {
  const unsigned k = (blockIdx.x * kThreads + threadIdx.x) / kWarp, lane = threadIdx.x % kWarp;
  if (k >= counters[1]) return;
  float v = 0.0f;
  for (unsigned b = lane; b < blocks; b += kWarp)
    v += partials[static_cast<std::size_t>(k) * blocks + b];
  v = warp_sum(v);
  if (lane == 0) out[longs[k]] = v;
}

unsigned medium_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, medium_segments, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

}  // namespace

std::size_t segmented_sum_workspace_bytes(std::size_t n, std::size_t segments) {
  return Layout(n, segments).bytes;
}

void segmented_sum(const float* in, std::size_t n, const std::int64_t* offsets,
                   std::size_t segments, float* out, Workspace workspace, cudaStream_t stream) {
  if (segments == 0) return;
  const Layout layout(n, segments);
  char* base = workspace.as<char>();
  auto* counters = reinterpret_cast<unsigned*>(base);
  auto* medium = reinterpret_cast<std::uint32_t*>(base + layout.medium_list);
  auto* longs = reinterpret_cast<std::uint32_t*>(base + layout.long_list);
  auto* partials = reinterpret_cast<float*>(base + layout.partials);
  REDUCE_CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned), stream));
  const std::size_t warps_per_block = kThreads / kWarp;
  const auto short_blocks =
      static_cast<unsigned>((segments + warps_per_block - 1) / warps_per_block);
  short_segments<<<short_blocks, kThreads, 0, stream>>>(in, offsets, segments, out, counters,
                                                        medium, longs);
  REDUCE_CUDA_CHECK_LAUNCH();
  medium_segments<<<medium_grid(), kThreads, 0, stream>>>(in, offsets, out, counters, medium);
  REDUCE_CUDA_CHECK_LAUNCH();
  const std::size_t longs_max = std::min(segments, n / static_cast<std::size_t>(kBlockMax) + 1);
  long_partials<<<kSplitBlocks, kThreads, 0, stream>>>(in, offsets, counters, longs, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  const auto total_blocks = static_cast<unsigned>((longs_max * kWarp + kThreads - 1) / kThreads);
  long_totals<<<total_blocks, kThreads, 0, stream>>>(out, counters, longs, partials, kSplitBlocks);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
