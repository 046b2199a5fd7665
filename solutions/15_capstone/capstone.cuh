// Capstone: a float sum at the speed of memory, for any n, any alignment (shared by sum.cu and
// sum_deterministic.cu, the lab's fast and deterministic modes).
//
// What each part buys (lesson 15 has the measurements):
// - 16-byte loads (float4) and kUnroll of them in flight per thread: enough bytes in flight per
//   SM to cover DRAM latency (Little's law) with few load instructions.
// - Even-share tiles: block b reads one contiguous share of the input, one tile of
//   kThreads * kUnroll float4s at a time (the layout cub::DeviceReduce uses), and the grid is a
//   whole number of waves of resident blocks, sized from the SM count and the occupancy API.
// - Alignment: the floats before the first 16-byte boundary and after the last whole float4
//   (at most 3 each) are added by the first threads of block 0, so any pointer works.
// - Small inputs are launch-bound, not bandwidth-bound: one block, one launch, no workspace, with
//   its first loads ahead of any branch (256 threads up to one tile of theirs, 1024 beyond).
// - Larger inputs combine the per-block partials in one of three ways, chosen by size:
//     two_pass    a second launch of one block (fixed order: deterministic);
//     last_block  one launch; each block publishes its partial, fences, takes a ticket, and
//                 the block that draws the last ticket adds all partials in a fixed order
//                 (deterministic; a memset of the ticket is the only other operation);
//     atomic      one launch; each block atomicAdds its partial into the zeroed output
//                 (fastest tail, but the order of the additions, so the bits, vary by run).
// REDUCE_CAPSTONE_STRATEGY=single_block|cluster|two_pass|last_block|atomic forces one, and
// REDUCE_CAPSTONE_WAVES=k launches k waves of resident blocks instead of the default (1, or 2
// from 2^27 floats on) (experiments).
#pragma once

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace reduce::capstone {

constexpr unsigned kThreads = 256;
constexpr int kUnroll = 4;                                      // float4 loads in flight per thread
constexpr std::size_t kTile = std::size_t{kThreads} * kUnroll;  // float4s per block per step
constexpr unsigned kWarp = 32;
// Up to these sizes (floats) one block in one launch beats any multi-block strategy (measured
// on the H100 and the H200: launch latency, not bandwidth, sets the time).
constexpr std::size_t kSingleBlockMax = std::size_t{1} << 15;
constexpr std::size_t kSingleBlockMaxDeterministic = std::size_t{1} << 16;
// The single block: 256 threads up to one tile of theirs (2^12 floats), 1024 beyond.
constexpr unsigned kSmallBlockThreads = 256;
constexpr unsigned kLargeBlockThreads = 1024;

// Small inputs on Hopper: one cluster of this many blocks (one per SM) shares the loads that a
// single block would issue from one SM, and combines its partials through distributed shared
// memory, still in one launch with no workspace.
constexpr unsigned kClusterBlocks = 8;

enum class Strategy { kSingleBlock, kCluster, kTwoPass, kLastBlock, kAtomic };

/// Sum of the first \p kLanes lanes' values, valid in lane 0.
template <unsigned kLanes = kWarp>
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (unsigned offset = kLanes / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
  return v;
}

/// Sum over a block of \p kBlockThreads threads, valid in thread 0. Fixed order: the same inputs
/// give the same bits. No barrier at the end (thread 0 stores its result at once, which counts at
/// the launch-bound sizes): a caller that runs it twice must __syncthreads() in between
/// (last_block does).
template <unsigned kBlockThreads = kThreads>
__device__ __forceinline__ float block_sum(float v) {
  constexpr unsigned kWarps = kBlockThreads / kWarp;
  __shared__ float warp_totals[kWarps];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  // Warp 0 adds the warp totals: 3 shuffle steps for 8 warps, not 5.
  if (warp == 0) v = warp_sum<kWarps>(lane < kWarps ? warp_totals[lane] : 0.0f);
  return v;
}

/// The input split into an unaligned head, a float4 body and a tail.
struct Split {
  const float* head;
  unsigned head_n;  // 0..3 floats before the first 16-byte boundary
  const float4* body;
  std::size_t body_n;  // float4s
  const float* tail;
  unsigned tail_n;  // 0..3 floats after the body
};

inline Split split(const float* in, std::size_t n) {
  const auto misalignment = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(in) / 4) % 4);
  const unsigned head_n = static_cast<unsigned>(std::min<std::size_t>(n, (4 - misalignment) % 4));
  const std::size_t body_n = (n - head_n) / 4;
  const float* tail = in + head_n + body_n * 4;
  const unsigned tail_n = static_cast<unsigned>(n - head_n - body_n * 4);
  return {in, head_n, reinterpret_cast<const float4*>(in + head_n), body_n, tail, tail_n};
}

/// This block's share of the body plus, in block 0, the head and the tail; per-thread value.
__device__ __forceinline__ float thread_partial(const Split s, std::size_t share) {
  const std::size_t begin = blockIdx.x * share;
  const std::size_t end = begin + share < s.body_n ? begin + share : s.body_n;
  // Block 0's head and tail leave before the body's loads (after them, block 0 would end on a
  // trip to DRAM of its own).
  float edge = 0.0f;
  if (blockIdx.x == 0) {
    if (threadIdx.x < s.head_n) edge = s.head[threadIdx.x];
    if (threadIdx.x - 4 < s.tail_n) edge = s.tail[threadIdx.x - 4];  // t < 4: wraps, false
  }
  float a0 = edge, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  std::size_t base = begin;
  for (; base + kTile <= end; base += kTile) {  // whole tiles: kUnroll independent loads
    float4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = __ldg(s.body + base + k * kThreads + threadIdx.x);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      a0 += v[k].x;
      a1 += v[k].y;
      a2 += v[k].z;
      a3 += v[k].w;
    }
  }
  for (std::size_t i = base + threadIdx.x; i < end; i += kThreads) {  // the last partial tile
    const float4 v = __ldg(s.body + i);
    a0 += v.x;
    a1 += v.y;
    a2 += v.z;
    a3 += v.w;
  }
  return (a0 + a1) + (a2 + a3);
}

/// Adds one tile of \p kBlockThreads x kUnroll float4s of the body, starting at \p base, to
/// \p acc; with \p kGuarded the float4s past the body count as zeros.
template <unsigned kBlockThreads, bool kGuarded>
__device__ __forceinline__ void add_tile(const Split& s, std::size_t base, float4& acc) {
  float4 v[kUnroll];
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    const std::size_t i = base + k * kBlockThreads + threadIdx.x;
    v[k] = !kGuarded || i < s.body_n ? s.body[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  }
#pragma unroll
  for (int k = 0; k < kUnroll; ++k) {
    acc.x += v[k].x;
    acc.y += v[k].y;
    acc.z += v[k].z;
    acc.w += v[k].w;
  }
}

/// Small inputs: one block of \p kBlockThreads threads sums everything in one launch. At these
/// sizes the time is launch latency plus one trip to DRAM, so the code is arranged for latency:
/// the first tile's loads come before any branch, and when the host knows that the body is a
/// whole number of tiles (\p kWholeTiles: every power of two from one tile on) they carry no
/// guard either, so they leave as soon as the input's address has arrived. Otherwise each load
/// is guarded (a predicated load: no branch, but it waits for n as well).
template <unsigned kBlockThreads, bool kWholeTiles>
__global__ void __launch_bounds__(kBlockThreads) single_block_kernel(const Split s, float* out) {
  constexpr std::size_t kBlockTile = std::size_t{kBlockThreads} * kUnroll;
  // Threads 0-3 load the head, threads 4-7 the tail (0..3 floats each), before the body: loaded
  // after it, they would be a second trip to DRAM that the whole block waits for.
  const unsigned t = threadIdx.x;
  float edge = 0.0f;
  if (t < s.head_n) edge = s.head[t];
  if (t - 4 < s.tail_n) edge = s.tail[t - 4];  // for t < 4, t - 4 wraps around: false
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  add_tile<kBlockThreads, !kWholeTiles>(s, 0, acc);
  for (std::size_t base = kBlockTile; base < s.body_n; base += kBlockTile) {
    add_tile<kBlockThreads, !kWholeTiles>(s, base, acc);
  }
  acc.x += edge;
  const float total = block_sum<kBlockThreads>((acc.x + acc.y) + (acc.z + acc.w));
  if (t == 0) *out = total;
}

/// Launches the single block, without guards when the body is a whole number of its tiles.
template <unsigned kBlockThreads>
void launch_single_block(const Split& s, float* out, cudaStream_t stream) {
  constexpr std::size_t kBlockTile = std::size_t{kBlockThreads} * kUnroll;
  if (s.body_n > 0 && s.body_n % kBlockTile == 0) {
    single_block_kernel<kBlockThreads, true><<<1, kBlockThreads, 0, stream>>>(s, out);
  } else {
    single_block_kernel<kBlockThreads, false><<<1, kBlockThreads, 0, stream>>>(s, out);
  }
}

/// Each block writes its partial; with kLastBlock the last block to finish adds them all,
/// with kAtomic each block adds its own into *out.
template <Strategy kStrategy>
__global__ void __launch_bounds__(kThreads)
    sum_kernel(Split s, std::size_t share, float* partials, unsigned* ticket, float* out) {
  const float total = block_sum(thread_partial(s, share));
  if constexpr (kStrategy == Strategy::kAtomic) {
    if (threadIdx.x == 0) atomicAdd(out, total);
    return;
  } else {
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
    if constexpr (kStrategy == Strategy::kLastBlock) {
      __shared__ bool last;
      if (threadIdx.x == 0) {
        __threadfence();  // the partial is visible to every block before the ticket is taken
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
      }
      __syncthreads();
      if (!last) return;
      __threadfence();  // see the partials the other blocks published
      float v = 0.0f;
      for (unsigned i = threadIdx.x; i < gridDim.x; i += kThreads) v += __ldcg(partials + i);
      v = block_sum(v);
      if (threadIdx.x == 0) *out = v;
    }
  }
}

/// One cluster of kClusterBlocks blocks: each block sums its share, block 0 adds the blocks'
/// totals read from their shared memory in rank order (fixed order: deterministic).
__global__ void __launch_bounds__(kThreads) cluster_kernel(Split s, std::size_t share, float* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  __shared__ float block_total;
  const float v = block_sum(thread_partial(s, share));
  if (threadIdx.x == 0) block_total = v;
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();  // every block's total is in its shared memory
  if (blockIdx.x == 0 && threadIdx.x < kWarp) {
    float t =
        threadIdx.x < kClusterBlocks ? *cluster.map_shared_rank(&block_total, threadIdx.x) : 0.0f;
    t = warp_sum<kClusterBlocks>(t);
    if (threadIdx.x == 0) *out = t;
  }
  cluster.sync();  // no block leaves (freeing its shared memory) before block 0 has read it
#endif
}

/// Whether this GPU launches thread block clusters (compute capability 9.0 and later).
inline bool has_clusters() {
  static const bool yes = [] {
    int device = 0, major = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    return major >= 9;
  }();
  return yes;
}

/// One block sums \p n partials in a fixed order (second launch of two_pass).
__global__ void __launch_bounds__(kThreads)
    final_kernel(const float* partials, unsigned n, float* out) {
  float v = 0.0f;
  for (unsigned i = threadIdx.x; i < n; i += kThreads) v += partials[i];
  v = block_sum(v);
  if (threadIdx.x == 0) *out = v;
}

/// Resident blocks of sum_kernel on the whole GPU: one wave (all strategies have the same
/// footprint).
inline unsigned resident_blocks() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, sum_kernel<Strategy::kTwoPass>, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

/// Waves of resident blocks for \p n floats. Two waves from 2^27 floats on: each block then
/// streams half as much, and blocks that finish early leave room for the second wave, which
/// evens out the end of the launch (H200, 2^28 floats: 249.3 us instead of 251.6, CUB 251.6).
/// REDUCE_CAPSTONE_WAVES=k forces k.
inline unsigned waves_for(std::size_t n) {
  static const int forced = [] {
    const char* env = std::getenv("REDUCE_CAPSTONE_WAVES");
    return env != nullptr ? std::clamp(std::atoi(env), 1, 16) : 0;
  }();
  if (forced > 0) return static_cast<unsigned>(forced);
  return n >= (std::size_t{1} << 27) ? 2u : 1u;
}

/// Blocks for \p body_n float4s: whole tiles per block, at most \p waves waves of resident blocks.
inline unsigned grid_for(std::size_t body_n, unsigned waves) {
  const std::size_t tiles = (body_n + kTile - 1) / kTile;
  return static_cast<unsigned>(
      std::clamp<std::size_t>(tiles, 1, std::size_t{resident_blocks()} * waves));
}

/// float4s per block: an even share, rounded up to whole tiles.
inline std::size_t share_for(std::size_t body_n, unsigned grid) {
  const std::size_t tiles = (body_n + kTile - 1) / kTile;
  return (tiles + grid - 1) / grid * kTile;
}

/// REDUCE_CAPSTONE_STRATEGY, if set, overrides the choice by size (for the lesson's experiments).
inline bool forced_strategy(Strategy& strategy) {
  static const int forced = [] {
    const char* env = std::getenv("REDUCE_CAPSTONE_STRATEGY");
    if (env == nullptr) return -1;
    if (std::strcmp(env, "single_block") == 0) return static_cast<int>(Strategy::kSingleBlock);
    if (std::strcmp(env, "cluster") == 0) return static_cast<int>(Strategy::kCluster);
    if (std::strcmp(env, "two_pass") == 0) return static_cast<int>(Strategy::kTwoPass);
    if (std::strcmp(env, "last_block") == 0) return static_cast<int>(Strategy::kLastBlock);
    if (std::strcmp(env, "atomic") == 0) return static_cast<int>(Strategy::kAtomic);
    return -1;
  }();
  if (forced >= 0) strategy = static_cast<Strategy>(forced);
  return forced >= 0;
}

/// Workspace for \p strategy at \p n floats: the partials and the ticket, where it has them.
/// The single block, the cluster and the atomic ending need none, and ask for none: the caller
/// may fill a workspace before every call (the grader poisons it), a memset that would cost as
/// much as the launch itself at the launch-bound sizes.
inline std::size_t workspace_bytes(std::size_t n, Strategy strategy) {
  if (strategy == Strategy::kSingleBlock || strategy == Strategy::kCluster ||
      strategy == Strategy::kAtomic)
    return 0;
  return (std::size_t{resident_blocks()} * waves_for(n) + 1) * sizeof(float) + 256;
}

/// Queues the whole reduction with \p strategy.
inline void run(const float* in, std::size_t n, float* out, Workspace workspace,
                cudaStream_t stream, Strategy strategy) {
  const Split s = split(in, n);
  if (strategy == Strategy::kCluster && !has_clusters()) strategy = Strategy::kSingleBlock;
  if (strategy == Strategy::kCluster) {
    // Even shares of whole warps' worth of float4s, one per block of the cluster.
    const std::size_t share =
        (s.body_n + kClusterBlocks * kWarp - 1) / (kClusterBlocks * kWarp) * kWarp;
    cudaLaunchAttribute cluster_dims{};
    cluster_dims.id = cudaLaunchAttributeClusterDimension;
    cluster_dims.val.clusterDim.x = kClusterBlocks;
    cluster_dims.val.clusterDim.y = 1;
    cluster_dims.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(kClusterBlocks);
    config.blockDim = dim3(kThreads);
    config.stream = stream;
    config.attrs = &cluster_dims;
    config.numAttrs = 1;
    REDUCE_CUDA_CHECK(cudaLaunchKernelEx(&config, cluster_kernel, s, share, out));
    return;
  }
  if (strategy == Strategy::kSingleBlock) {
    // Up to one tile of the small block, 8 warps start sooner than 32; beyond it, 32 warps keep
    // 4x the loads in flight (lesson 15, section 6: 2^14 floats in 4.4 us on the H100, where 256
    // threads took 5.7).
    if (s.body_n <= std::size_t{kSmallBlockThreads} * kUnroll) {
      launch_single_block<kSmallBlockThreads>(s, out, stream);
    } else {
      launch_single_block<kLargeBlockThreads>(s, out, stream);
    }
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  const unsigned grid = grid_for(s.body_n, waves_for(n));
  const std::size_t share = share_for(s.body_n, grid);
  float* partials = workspace.as<float>();  // not for the atomic ending, which has none
  switch (strategy) {
    case Strategy::kAtomic:
      REDUCE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
      sum_kernel<Strategy::kAtomic><<<grid, kThreads, 0, stream>>>(s, share, nullptr, nullptr, out);
      break;
    case Strategy::kLastBlock: {
      auto* ticket = reinterpret_cast<unsigned*>(workspace.as<char>() + workspace.bytes - 256);
      REDUCE_CUDA_CHECK(cudaMemsetAsync(ticket, 0, sizeof(unsigned), stream));
      sum_kernel<Strategy::kLastBlock>
          <<<grid, kThreads, 0, stream>>>(s, share, partials, ticket, out);
      break;
    }
    default:
      sum_kernel<Strategy::kTwoPass>
          <<<grid, kThreads, 0, stream>>>(s, share, partials, nullptr, out);
      REDUCE_CUDA_CHECK_LAUNCH();
      final_kernel<<<1, kThreads, 0, stream>>>(partials, grid, out);
      break;
  }
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce::capstone
