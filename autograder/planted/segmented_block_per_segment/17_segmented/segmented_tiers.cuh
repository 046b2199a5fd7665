// Lab 17's three tiers, shared by the segmented sum and the softmax statistics.
//
// The offsets live on the device and the call must not wait for them, so the host cannot sort
// the segments by length; the kernels do it themselves, in three tiers:
//   short (up to kWarpMax elements): one warp per kSegmentsPerWarp neighbouring segments, in the
//     first kernel, which issues the first load of all of them before combining any (a row of 32
//     floats is one load per lane: one segment per warp would leave the memory idle), combines
//     the eight at once by halving (halving_combine), and appends every longer segment to one of
//     two work lists (an atomic counter each);
//   medium (up to kBlockMax): one block per listed segment, blocks taking segments in turn;
//   long: each listed segment is cut into kChunks chunks, the grid takes the (segment, chunk)
//     pairs in turn and writes one partial each, and one warp per segment combines its partials
//     in chunk order.
// Each segment's result is computed in a fixed order (a list's order may change from run to run,
// but a segment's own tree does not), so the results are the same on every run.
//
// An operation type Op gives the tiers what they need: its Value, identity(), element(x),
// combine(a, b), shuffle_xor(v, mask), warp_combine(v) (every lane gets the warp's value;
// butterfly<Op> does it with shuffle_xor) and store(out, s, v).
#pragma once

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cstdint>

namespace reduce::segmented {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr unsigned kSegmentsPerWarp = 8;     // short segments one warp takes at once...
constexpr std::size_t kSparseLength = 256;   // ...unless segments average this many elements
constexpr std::int64_t kWarpMax = 1024;      // longest segment a warp sums
constexpr std::int64_t kBlockMax = 1 << 18;  // longest segment one block sums
constexpr unsigned kChunks = 256;            // chunks of a long segment (partials per segment)

/// The workspace: two list counters, the two lists, then the long segments' partials.
struct Layout {
  std::size_t medium_list = 256, long_list = 0, partials = 0, bytes = 0;
  Layout(std::size_t n, std::size_t segments, std::size_t value_bytes) {
    long_list = medium_list + segments * sizeof(std::uint32_t);
    partials = (long_list + max_longs(n, segments) * sizeof(std::uint32_t) + 255) / 256 * 256;
    bytes = partials + max_longs(n, segments) * kChunks * value_bytes;
  }
  /// At most this many segments are longer than kBlockMax.
  static std::size_t max_longs(std::size_t n, std::size_t segments) {
    return std::min(segments, n / static_cast<std::size_t>(kBlockMax) + 1);
  }
};

/// Every lane of the warp ends with the warp's combined value: a butterfly of Op::combine in a
/// fixed order (each pair of lanes combines the same two values, so all lanes agree bit for bit).
template <class Op>
__device__ typename Op::Value butterfly(typename Op::Value v) {
  for (unsigned mask = kWarp / 2; mask > 0; mask >>= 1)
    v = Op::combine(v, Op::shuffle_xor(v, mask));
  return v;
}

/// The block's combined value, in thread 0. Every thread must call it.
template <class Op>
__device__ typename Op::Value block_combine(typename Op::Value v) {
  __shared__ typename Op::Value warp_values[kThreads / kWarp];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = Op::warp_combine(v);
  __syncthreads();  // warp_values may still be read from the previous call
  if (lane == 0) warp_values[warp] = v;
  __syncthreads();
  if (warp > 0) return v;
  v = lane < kThreads / kWarp ? warp_values[lane] : Op::identity();
  return Op::warp_combine(v);
}

/// Combines in[i], in[i + step], ... below end into acc, kInFlight loads in flight (a power of
/// two), combined pairwise before they join acc.
template <class Op, unsigned kInFlight = 4>
__device__ typename Op::Value accumulate(typename Op::Value acc, const float* __restrict__ in,
                                         std::int64_t i, std::int64_t end, std::int64_t step) {
  using Value = typename Op::Value;
  for (; i + (kInFlight - 1) * step < end; i += kInFlight * step) {
    Value v[kInFlight];
#pragma unroll
    for (unsigned k = 0; k < kInFlight; ++k) v[k] = Op::element(in[i + k * step]);
#pragma unroll
    for (unsigned width = 1; width < kInFlight; width *= 2)
#pragma unroll
      for (unsigned k = 0; k + width < kInFlight; k += 2 * width)
        v[k] = Op::combine(v[k], v[k + width]);
    acc = Op::combine(acc, v[0]);
  }
  for (; i < end; i += step) acc = Op::combine(acc, Op::element(in[i]));
  return acc;
}

/// Combines the warp's kSegmentsPerWarp values per lane at once: at each of the first steps a
/// lane keeps half of its values and trades the other half with its partner, so eight values take
/// 4 + 2 + 1 shuffles and then two butterfly steps (9 in all) where eight butterflies would take
/// 40. Leaves in acc[0] the combined value of segment j, the one returned (from the lane's upper
/// bits); every segment's value ends in kWarp / kSegmentsPerWarp lanes, in a fixed order.
template <class Op, unsigned kPerWarp>
__device__ unsigned halving_combine(typename Op::Value (&acc)[kPerWarp], unsigned lane) {
  unsigned j = 0, mask = kWarp / 2;
#pragma unroll
  for (unsigned half = kPerWarp / 2; half >= 1; half /= 2, mask /= 2) {
    const bool upper = (lane & mask) != 0;
#pragma unroll
    for (unsigned k = 0; k < half; ++k) {
      const auto send = upper ? acc[k] : acc[k + half];
      const auto keep = upper ? acc[k + half] : acc[k];
      acc[k] = Op::combine(keep, Op::shuffle_xor(send, mask));
    }
    j += upper ? half : 0;
  }
  for (; mask > 0; mask /= 2) acc[0] = Op::combine(acc[0], Op::shuffle_xor(acc[0], mask));
  return j;
}

/// Short segments, kPerWarp per warp; longer ones go to the medium or the long list.
template <class Op, unsigned kPerWarp>
__global__ void short_segments(const float* __restrict__ in,
                               const std::int64_t* __restrict__ offsets, std::size_t segments,
                               float* __restrict__ out, unsigned* __restrict__ counters,
                               std::uint32_t* __restrict__ medium,
                               std::uint32_t* __restrict__ longs) {
  using Value = typename Op::Value;
  const std::size_t first =
      (static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x) / kWarp * kPerWarp;
  const unsigned lane = threadIdx.x % kWarp;
  if (first >= segments) return;  // a whole warp leaves together
  // Lanes 0..kPerWarp read the warp's offsets in one load; the others get them by shuffle.
  const std::int64_t mine =
      lane <= kPerWarp && first + lane <= segments ? offsets[first + lane] : 0;
  std::int64_t bound[kPerWarp + 1];
#pragma unroll
  for (unsigned j = 0; j <= kPerWarp; ++j) bound[j] = __shfl_sync(kFullMask, mine, j);
  // A segment is this warp's if it exists and is short; a longer one is listed by its lane.
  bool ours[kPerWarp];
#pragma unroll
  for (unsigned j = 0; j < kPerWarp; ++j) {
    const std::int64_t length = bound[j + 1] - bound[j];
    ours[j] = first + j < segments && length <= kWarpMax;
    if (first + j < segments && !ours[j] && lane == j) {
      const auto s = static_cast<std::uint32_t>(first + j);
      if (length > kBlockMax)
        longs[atomicAdd(&counters[1], 1u)] = s;
      else
        medium[atomicAdd(&counters[0], 1u)] = s;
    }
  }
  // The first element of every segment is loaded before any is combined.
  float x[kPerWarp];
#pragma unroll
  for (unsigned j = 0; j < kPerWarp; ++j) {
    const std::int64_t i = bound[j] + lane;
    x[j] = ours[j] && i < bound[j + 1] ? in[i] : 0.0f;
  }
  Value acc[kPerWarp];
#pragma unroll
  for (unsigned j = 0; j < kPerWarp; ++j) {
    const bool has = ours[j] && bound[j] + lane < bound[j + 1];
    acc[j] = has ? Op::element(x[j]) : Op::identity();
    if (ours[j]) acc[j] = accumulate<Op>(acc[j], in, bound[j] + kWarp + lane, bound[j + 1], kWarp);
  }
  const unsigned j = halving_combine<Op, kPerWarp>(acc, lane);
  if (lane % (kWarp / kPerWarp) == 0 && ours[j]) Op::store(out, first + j, acc[0]);
}

/// Medium segments: block b takes listed segments b, b + gridDim.x, ...
template <class Op>
__global__ void medium_segments(const float* __restrict__ in,
                                const std::int64_t* __restrict__ offsets, float* __restrict__ out,
                                const unsigned* __restrict__ counters,
                                const std::uint32_t* __restrict__ medium) {
  const unsigned count = counters[0];
  for (unsigned k = blockIdx.x; k < count; k += gridDim.x) {
    const std::uint32_t s = medium[k];
    const auto acc =
        accumulate<Op, 8>(Op::identity(), in, offsets[s] + threadIdx.x, offsets[s + 1], kThreads);
    const auto total = block_combine<Op>(acc);
    if (threadIdx.x == 0) Op::store(out, s, total);
  }
}

/// Long segments: the grid takes (listed segment k, chunk c) pairs in turn, one partial each.
template <class Op>
__global__ void long_partials(const float* __restrict__ in,
                              const std::int64_t* __restrict__ offsets,
                              const unsigned* __restrict__ counters,
                              const std::uint32_t* __restrict__ longs,
                              typename Op::Value* __restrict__ partials) {
  const unsigned items = counters[1] * kChunks;
  for (unsigned item = blockIdx.x; item < items; item += gridDim.x) {
    const std::uint32_t s = longs[item / kChunks];
    const std::int64_t begin = offsets[s], length = offsets[s + 1] - begin;
    const std::int64_t chunk = (length + kChunks - 1) / kChunks;
    const std::int64_t first = item % kChunks * chunk, last = first + chunk;
    const std::int64_t from = begin + (first < length ? first : length);
    const std::int64_t to = begin + (last < length ? last : length);
    const auto acc = accumulate<Op, 8>(Op::identity(), in, from + threadIdx.x, to, kThreads);
    const auto total = block_combine<Op>(acc);
    if (threadIdx.x == 0) partials[item] = total;
  }
}

/// One warp per long segment combines its partials, in chunk order within each lane.
template <class Op>
__global__ void long_totals(float* __restrict__ out, const unsigned* __restrict__ counters,
                            const std::uint32_t* __restrict__ longs,
                            const typename Op::Value* __restrict__ partials) {
  const unsigned k = (blockIdx.x * kThreads + threadIdx.x) / kWarp, lane = threadIdx.x % kWarp;
  if (k >= counters[1]) return;
  auto acc = Op::identity();
  for (unsigned c = lane; c < kChunks; c += kWarp)
    acc = Op::combine(acc, partials[static_cast<std::size_t>(k) * kChunks + c]);
  acc = Op::warp_combine(acc);
  if (lane == 0) Op::store(out, longs[k], acc);
}

/// Blocks of \p kernel that fit on the device at once.
template <class Kernel>
unsigned resident_blocks(Kernel kernel) {
  int device = 0, sms = 0, per_sm = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return static_cast<unsigned>(sms * per_sm);
}

template <class Op>
std::size_t workspace_bytes(std::size_t n, std::size_t segments) {
  return Layout(n, segments, sizeof(typename Op::Value)).bytes;
}

template <class Op>
void run(const float* in, std::size_t n, const std::int64_t* offsets, std::size_t segments,
         float* out, Workspace workspace, cudaStream_t stream) {
  using Value = typename Op::Value;
  if (segments == 0) return;
  static const unsigned medium_grid = resident_blocks(medium_segments<Op>);
  static const unsigned long_grid = resident_blocks(long_partials<Op>);
  const Layout layout(n, segments, sizeof(Value));
  char* base = workspace.as<char>();
  auto* counters = reinterpret_cast<unsigned*>(base);
  auto* medium = reinterpret_cast<std::uint32_t*>(base + layout.medium_list);
  auto* longs = reinterpret_cast<std::uint32_t*>(base + layout.long_list);
  auto* partials = reinterpret_cast<Value*>(base + layout.partials);
  REDUCE_CUDA_CHECK(cudaMemsetAsync(counters, 0, 2 * sizeof(unsigned), stream));
  // Eight short segments per warp keep the memory busy when segments are short; when they
  // average kSparseLength or more (n / segments bounds the average from above), a warp each
  // keeps more warps at work.
  const bool sparse = n / segments >= kSparseLength;
  const std::size_t per_block = kThreads / kWarp * (sparse ? 1 : kSegmentsPerWarp);
  const auto short_blocks = static_cast<unsigned>((segments + per_block - 1) / per_block);
  if (sparse)
    short_segments<Op, 1><<<short_blocks, kThreads, 0, stream>>>(in, offsets, segments, out,
                                                                 counters, medium, longs);
  else
    short_segments<Op, kSegmentsPerWarp><<<short_blocks, kThreads, 0, stream>>>(
        in, offsets, segments, out, counters, medium, longs);
  REDUCE_CUDA_CHECK_LAUNCH();
  medium_segments<Op><<<medium_grid, kThreads, 0, stream>>>(in, offsets, out, counters, medium);
  REDUCE_CUDA_CHECK_LAUNCH();
  long_partials<Op><<<long_grid, kThreads, 0, stream>>>(in, offsets, counters, longs, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  const std::size_t longs_max = Layout::max_longs(n, segments);
  const auto total_blocks = static_cast<unsigned>((longs_max * kWarp + kThreads - 1) / kThreads);
  long_totals<Op><<<total_blocks, kThreads, 0, stream>>>(out, counters, longs, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce::segmented
