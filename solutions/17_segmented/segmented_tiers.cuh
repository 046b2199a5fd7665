// Lab 17's tiers, shared by the segmented sum and the softmax statistics.
//
// The offsets live on the device and the call must not wait for them, so the host cannot look at
// the lengths. It knows only their average, n / segments, and picks from it how many lanes share
// a row: a thread, a few lanes, or a warp (run()). Then, on one stream:
//   a memset zeroes the work lists' counters (the workspace holds garbage on entry);
//   group_rows: a group of kLanes lanes per row, every first load of the group's rows issued
//     before any value is combined, 16-byte loads between each row's first and last 16-byte
//     boundaries. A row longer than the tier's cap is listed instead: its chunks of kChunk
//     elements go to a work list (an atomic counter), and a row of several chunks to a second;
//     rows averaging 64 elements or fewer take short_rows instead, which loads a row as the
//     whole float4s that cover it and pads the floats that are not the row's (a short row's
//     unaligned ends are a large share of it), at 40 registers a thread to keep six blocks of
//     loads in flight on each multiprocessor;
//   listed_chunks: a warp per listed chunk, the resident warps taking chunks in turn (and
//     loading the next chunk's place while their loads are in flight). A row of one chunk is
//     stored at once; a longer row's chunks write partials, and the warp whose chunk is the
//     row's last to finish combines them in chunk order.
// Rows averaging kSplitFrom elements or more take split_rows instead of group_rows: a block per
// part of a row (the row cut in equal parts of at most 4096, 8192 or 16384 elements, as many as a
// block's loads cover at once, like CUB's one tile per block), so the memory sees every load of
// a part at once; a row of one part is stored by its block, a longer row's parts write partials
// that listed_chunks' warps combine in part order before they read the listed chunks.
// listed_chunks is launched so that it may start while the rows' kernel drains (programmatic
// dependent launch, sm_90) and waits for it only where it needs its results.
//
// Each row's result is computed in a fixed order (the lists' order changes from run to run, but a
// row's own tree does not), so the results are the same on every run.
//
// An operation type Op gives the tiers what they need: its Value, identity(), element(x), pad() (a
// float that changes no fold), fold(v, count) (the first count float4s of an array v combined,
// identity() for none), combine(a, b), shuffle_xor(v, mask), warp_combine(v) (every lane gets the
// warp's value) and store(out, s, v).
#pragma once

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace reduce::segmented {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr std::int64_t kChunk = 2048;       // elements of a listed row one warp reads at a time
constexpr unsigned kChunkLoads = 4;         // float4 loads per lane in flight in a chunk
constexpr unsigned kListedBlocksPerSm = 4;  // listed_chunks' occupancy (registers capped to fit)
constexpr std::int64_t kListedFrom = 257;   // no tier lists a row shorter than this, but:
constexpr std::size_t kShortListed = 6;     // short_rows' rows within 3 floats of in[0] or in[n]
constexpr std::int64_t kPart = 4096;        // fewest elements of a part when rows are split
constexpr std::int64_t kSplitFrom = 2049;   // rows averaging this or more are split by blocks

/// Longest row a group keeps (four times what its first loads cover, and at least 256); longer
/// rows are listed.
__host__ __device__ constexpr std::int64_t group_cap(unsigned lanes, unsigned loads) {
  return 16 * lanes * loads > kListedFrom - 1 ? 16 * lanes * loads : kListedFrom - 1;
}

/// A listed piece of work: chunk `chunk` of row `segment`, whose entry in the long-row list is
/// `row` (kOneChunk for a row of one chunk).
struct Item {
  std::uint64_t segment;
  std::uint32_t chunk, row;
};

/// Item::row of a row of one chunk.
constexpr std::uint32_t kOneChunk = 0xFFFFFFFFu;

/// A listed row of several chunks: its partials are partials[first], ..., [first + chunks - 1];
/// `left` counts its chunks not yet read (the warp that brings it to 0 combines them).
struct LongRow {
  std::uint32_t first, chunks, left, unused;
};

/// The workspace: the counters (chunks listed, long rows listed), the chunk list, the long-row
/// list, then one partial per listed chunk.
struct Layout {
  std::size_t items = 256, long_rows = 0, partials = 0, parts = 0, bytes = 0;
  Layout(std::size_t n, std::size_t segments, std::size_t value_bytes) {
    long_rows = items + max_items(n, segments) * sizeof(Item);
    partials = (long_rows + max_long_rows(n, segments) * sizeof(LongRow) + 255) / 256 * 256;
    parts = partials + max_items(n, segments) * value_bytes;
    bytes = parts + segments * parts_per_row(n, segments) * value_bytes;
  }
  /// Listed rows are longer than kListedFrom - 1 (but for short_rows' few) and have at most
  /// length / kChunk + 1 chunks.
  static std::size_t max_items(std::size_t n, std::size_t segments) {
    return std::min(segments, n / static_cast<std::size_t>(kListedFrom)) +
           n / static_cast<std::size_t>(kChunk) + 1 + kShortListed;
  }
  /// Rows of several chunks are longer than kChunk.
  static std::size_t max_long_rows(std::size_t n, std::size_t segments) {
    return std::min(segments, n / static_cast<std::size_t>(kChunk) + 1);
  }
  /// Parts per row when rows are split (average kSplitFrom or more) into parts of kPart elements
  /// (the most parts any split tier makes), else 0.
  static std::size_t parts_per_row(std::size_t n, std::size_t segments) {
    const std::size_t average = segments == 0 ? 0 : n / segments;
    return average >= static_cast<std::size_t>(kSplitFrom) ? (average + kPart - 1) / kPart : 0;
  }
};

/// Lets the next kernel of the stream start as this grid drains (sm_90; no-op before).
__device__ inline void let_next_grid_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}

/// Waits until the previous kernel of the stream has finished and its writes are visible
/// (sm_90; before it, stream order already did).
__device__ inline void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}

/// A value that another block of this grid wrote, read from the L2 (where every block's writes
/// meet), never from a stale line of this multiprocessor's L1.
template <class T>
__device__ T load_from_l2(const T* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "a 4, 8 or 16-byte value");
  T v;
  if constexpr (sizeof(T) == 4) {
    const unsigned raw = __ldcg(reinterpret_cast<const unsigned*>(p));
    std::memcpy(&v, &raw, sizeof(T));
  } else if constexpr (sizeof(T) == 8) {
    const uint2 raw = __ldcg(reinterpret_cast<const uint2*>(p));
    std::memcpy(&v, &raw, sizeof(T));
  } else {
    const uint4 raw = __ldcg(reinterpret_cast<const uint4*>(p));
    std::memcpy(&v, &raw, sizeof(T));
  }
  return v;
}

/// Every lane of the warp ends with the warp's combined value: a butterfly of Op::combine in a
/// fixed order (each pair of lanes combines the same two values, so all lanes agree bit for bit).
template <class Op, unsigned kLanes = kWarp>
__device__ typename Op::Value butterfly(typename Op::Value v) {
#pragma unroll
  for (unsigned mask = kLanes / 2; mask > 0; mask >>= 1)
    v = Op::combine(v, Op::shuffle_xor(v, mask));
  return v;
}

/// Combines v[0..kCount) pairwise (kCount a power of two), leaving the result in v[0].
template <class Op, unsigned kCount>
__device__ void combine_pairwise(typename Op::Value (&v)[kCount]) {
#pragma unroll
  for (unsigned width = 1; width < kCount; width *= 2)
#pragma unroll
    for (unsigned k = 0; k + width < kCount; k += 2 * width) v[k] = Op::combine(v[k], v[k + width]);
}

/// A row cut for 16-byte loads: up to three floats before its first 16-byte boundary (head),
/// whole float4s (body), and up to three floats after the last whole float4 (tail).
struct Span {
  const float* head;
  const float4* body;
  const float* tail;
  std::int64_t vectors;
  unsigned head_count, tail_count;
};

__device__ inline Span cut(const float* in, std::int64_t begin, std::int64_t end) {
  const float* first = in + begin;
  const std::int64_t length = end - begin;
  const auto misaligned =
      static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(first) / sizeof(float) % 4);
  const std::int64_t to_boundary = (4 - misaligned) % 4;
  const std::int64_t head = length < to_boundary ? length : to_boundary;
  const std::int64_t vectors = (length - head) / 4;
  return {first,
          reinterpret_cast<const float4*>(first + head),
          first + head + 4 * vectors,
          vectors,
          static_cast<unsigned>(head),
          static_cast<unsigned>(length - head - 4 * vectors)};
}

/// A row's first loads for one lane of a group of kLanes: its float4s lane, lane + kLanes, ...
/// (kLoads of them) and its share of the head and the tail. Issued before any is combined.
template <unsigned kLanes, unsigned kLoads>
struct FirstLoads {
  static constexpr unsigned kScalars = (3 + kLanes - 1) / kLanes;  // head or tail floats per lane
  float4 v[kLoads];
  float head[kScalars], tail[kScalars];

  __device__ void issue(const Span& span, unsigned lane) {
#pragma unroll
    for (unsigned k = 0; k < kLoads; ++k)
      if (lane + k * kLanes < span.vectors) v[k] = __ldg(span.body + lane + k * kLanes);
#pragma unroll
    for (unsigned j = 0; j < kScalars; ++j) {
      if (lane + j * kLanes < span.head_count) head[j] = __ldg(span.head + lane + j * kLanes);
      if (lane + j * kLanes < span.tail_count) tail[j] = __ldg(span.tail + lane + j * kLanes);
    }
  }

  /// This lane's value of the row: its first loads folded, then the rest of its float4s kLoads
  /// in flight, then its head and tail floats.
  template <class Op>
  __device__ typename Op::Value finish(const Span& span, unsigned lane) const {
    const std::int64_t mine = span.vectors > lane ? (span.vectors - lane + kLanes - 1) / kLanes : 0;
    typename Op::Value acc = Op::fold(v, mine < kLoads ? static_cast<unsigned>(mine) : kLoads);
    for (std::int64_t i = lane + kLoads * kLanes; i < span.vectors; i += kLoads * kLanes) {
      float4 rest[kLoads];
      unsigned loaded = 0;
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k)
        if (i + k * kLanes < span.vectors) {
          rest[k] = __ldg(span.body + i + k * kLanes);
          loaded = k + 1;
        }
      acc = Op::combine(acc, Op::fold(rest, loaded));
    }
#pragma unroll
    for (unsigned j = 0; j < kScalars; ++j) {
      if (lane + j * kLanes < span.head_count) acc = Op::combine(acc, Op::element(head[j]));
      if (lane + j * kLanes < span.tail_count) acc = Op::combine(acc, Op::element(tail[j]));
    }
    return acc;
  }
};

/// A short row as the aligned float4s that cover it (its window): the first may begin up to three
/// floats before the row and the last end up to three floats after it. Those floats are another
/// row's or no row's: they are loaded, then replaced by Op::pad().
struct Window {
  const float4* first;  ///< the window's first float4
  unsigned vectors;     ///< float4s in the window, 0 for an empty row
  unsigned lo;          ///< floats of the first float4 before the row (0 to 3)
  unsigned last;        ///< floats of the last float4 in the row (1 to 4)
  bool inside;          ///< the whole window lies in in[0, n) (else the row is listed)
};

__device__ inline Window window(const float* in, std::size_t n, std::int64_t begin,
                                std::int64_t end) {
  const auto lo =
      static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(in + begin) / sizeof(float) % 4);
  const auto length = static_cast<unsigned>(end - begin);
  const unsigned vectors = length == 0 ? 0 : (lo + length + 3) / 4;
  const std::int64_t from = begin - lo;  // the window's first float, from in
  return {reinterpret_cast<const float4*>(in + from), vectors, lo, lo + length - 4 * (vectors - 1),
          vectors == 0 || (from >= 0 && static_cast<std::size_t>(from) + 4 * vectors <= n)};
}

/// A row's loads for one lane of a group of kLanes: the window's float4s lane, lane + kLanes, ...
/// (kLoads of them first, all issued before any is combined).
template <unsigned kLanes, unsigned kLoads>
struct WindowLoads {
  float4 v[kLoads];

  /// Float4 q of the window with its floats outside the row replaced by Op::pad().
  template <class Op>
  __device__ static void pad(const Window& w, unsigned q, float4& x) {
    if (q == 0) {
      x.x = w.lo > 0 ? Op::pad() : x.x;
      x.y = w.lo > 1 ? Op::pad() : x.y;
      x.z = w.lo > 2 ? Op::pad() : x.z;
    }
    if (q + 1 == w.vectors) {
      x.y = w.last < 2 ? Op::pad() : x.y;
      x.z = w.last < 3 ? Op::pad() : x.z;
      x.w = w.last < 4 ? Op::pad() : x.w;
    }
  }

  __device__ void issue(const Window& w, unsigned lane) {
#pragma unroll
    for (unsigned k = 0; k < kLoads; ++k)
      if (lane + k * kLanes < w.vectors) v[k] = __ldg(w.first + lane + k * kLanes);
  }

  /// This lane's value of the row: its first loads folded, then the rest of its float4s kLoads
  /// in flight.
  template <class Op>
  __device__ typename Op::Value finish(const Window& w, unsigned lane) {
    const unsigned mine = w.vectors > lane ? (w.vectors - lane + kLanes - 1) / kLanes : 0;
#pragma unroll
    for (unsigned k = 0; k < kLoads; ++k)
      if (k < mine) pad<Op>(w, lane + k * kLanes, v[k]);
    typename Op::Value acc = Op::fold(v, mine < kLoads ? mine : kLoads);
    for (unsigned i = lane + kLoads * kLanes; i < w.vectors; i += kLoads * kLanes) {
      unsigned loaded = 0;
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k)
        if (i + k * kLanes < w.vectors) {
          v[k] = __ldg(w.first + i + k * kLanes);
          loaded = k + 1;
        }
#pragma unroll
      for (unsigned k = 0; k < kLoads; ++k)
        if (k < loaded) pad<Op>(w, i + k * kLanes, v[k]);
      acc = Op::combine(acc, Op::fold(v, loaded));
    }
    return acc;
  }
};

/// The work lists, as group_rows fills them and the later kernels read them.
struct Lists {
  unsigned* counters;  ///< [0]: chunks listed, [1]: long rows listed
  Item* items;
  LongRow* long_rows;

  /// Appends the chunks of row \p s (of \p length elements), and the row itself if it has
  /// several. The whole warp calls it with the same row; its lanes write the chunks.
  __device__ void add(std::size_t s, std::int64_t length, unsigned lane) const {
    const auto chunks = static_cast<unsigned>((length + kChunk - 1) / kChunk);
    unsigned first = 0, row = kOneChunk;
    if (lane == 0) {
      first = atomicAdd(&counters[0], chunks);
      if (chunks > 1) {
        row = atomicAdd(&counters[1], 1u);
        long_rows[row] = {first, chunks, chunks, 0};
      }
    }
    first = __shfl_sync(kFullMask, first, 0);
    row = __shfl_sync(kFullMask, row, 0);
    for (unsigned c = lane; c < chunks; c += kWarp) items[first + c] = {s, c, row};
  }
};

/// Rows shared by groups of kLanes lanes, kRows rows per group; rows longer than the tier's cap
/// are listed. A warp takes (32 / kLanes) * kRows neighbouring rows.
template <class Op, unsigned kLanes, unsigned kLoads, unsigned kRows, unsigned kBlocksPerSm>
__global__ __launch_bounds__(kThreads,
                             kBlocksPerSm) void group_rows(const float* __restrict__ in,
                                                           const std::int64_t* __restrict__ offsets,
                                                           std::size_t segments,
                                                           float* __restrict__ out, Lists lists) {
  let_next_grid_start();
  using Value = typename Op::Value;
  constexpr unsigned kGroups = kWarp / kLanes;
  constexpr std::int64_t kCap = group_cap(kLanes, kLoads);
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x) / kWarp;
  const unsigned lane = threadIdx.x % kLanes, group = threadIdx.x % kWarp / kLanes;
  const std::size_t first = warp * kGroups * kRows;
  if (first >= segments) return;  // a whole warp leaves together
  Span span[kRows];
  bool ours[kRows];
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) {
    const std::size_t s = first + r * kGroups + group;
    const std::int64_t begin = s < segments ? offsets[s] : 0;
    const std::int64_t end = s < segments ? offsets[s + 1] : 0;
    ours[r] = end - begin <= kCap;
    // Rows too long for their group are listed one at a time, by the whole warp.
    for (unsigned listing = __ballot_sync(kFullMask, !ours[r] && lane == 0); listing != 0;
         listing &= listing - 1) {
      const unsigned by = __ffs(listing) - 1;
      lists.add(__shfl_sync(kFullMask, s, by), __shfl_sync(kFullMask, end - begin, by),
                threadIdx.x % kWarp);
    }
    span[r] = cut(in, begin, ours[r] ? end : begin);
  }
  FirstLoads<kLanes, kLoads> loads[kRows];
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) loads[r].issue(span[r], lane);
#pragma unroll
  for (unsigned r = 0; r < kRows; ++r) {
    const Value mine = loads[r].template finish<Op>(span[r], lane);
    const Value v = kLanes == kWarp ? Op::warp_combine(mine) : butterfly<Op, kLanes>(mine);
    const std::size_t s = first + r * kGroups + group;
    if (lane == 0 && s < segments && ours[r]) Op::store(out, s, v);
  }
}

/// Short rows shared by groups of kLanes lanes, each row loaded by its window (whole float4s, the
/// floats outside the row padded), so a lane issues 16-byte loads only, whatever the row's
/// alignment. A warp takes 32 / kLanes neighbouring rows. Rows longer than the tier's cap are
/// listed, and so are the few whose window leaves in[0, n) (within three floats of its ends).
template <class Op, unsigned kLanes, unsigned kLoads, unsigned kBlocksPerSm>
__global__ __launch_bounds__(kThreads, kBlocksPerSm) void short_rows(
    const float* __restrict__ in, std::size_t n, const std::int64_t* __restrict__ offsets,
    std::size_t segments, float* __restrict__ out, Lists lists) {
  let_next_grid_start();
  constexpr unsigned kGroups = kWarp / kLanes;
  constexpr std::int64_t kCap = group_cap(kLanes, kLoads);
  const unsigned lane = threadIdx.x % kLanes, group = threadIdx.x % kWarp / kLanes;
  const std::size_t first =
      (static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x) / kWarp * kGroups;
  if (first >= segments) return;  // a whole warp leaves together
  const std::size_t s = first + group;
  const std::int64_t begin = s < segments ? offsets[s] : 0;
  const std::int64_t end = s < segments ? offsets[s + 1] : 0;
  Window w = window(in, n, begin, end - begin <= kCap ? end : begin);
  const bool ours = end - begin <= kCap && w.inside;
  if (!ours) w.vectors = 0;
  for (unsigned listing = __ballot_sync(kFullMask, !ours && lane == 0); listing != 0;
       listing &= listing - 1) {
    const unsigned by = __ffs(listing) - 1;
    lists.add(__shfl_sync(kFullMask, s, by), __shfl_sync(kFullMask, end - begin, by),
              threadIdx.x % kWarp);
  }
  WindowLoads<kLanes, kLoads> loads;
  loads.issue(w, lane);
  const auto mine = loads.template finish<Op>(w, lane);
  const auto v = kLanes == kWarp ? Op::warp_combine(mine) : butterfly<Op, kLanes>(mine);
  if (lane == 0 && s < segments && ours) Op::store(out, s, v);
}

/// One warp stores row \p s's value: its \p count partials combined in order (read from the L2:
/// other blocks of the grid may have written them).
template <class Op>
__device__ void store_in_order(float* out, std::size_t s, const typename Op::Value* partials,
                               unsigned count, unsigned lane) {
  auto acc = Op::identity();
  for (unsigned c = lane; c < count; c += kWarp) acc = Op::combine(acc, load_from_l2(partials + c));
  acc = Op::warp_combine(acc);
  if (lane == 0) Op::store(out, s, acc);
}

/// Whether split_rows lists a row instead of splitting it: more than four times its share.
__device__ inline bool too_long_to_split(std::int64_t length, unsigned parts, std::int64_t part) {
  return length > static_cast<std::int64_t>(parts) * part * 4;
}

/// This block's value of \p span: kLoads float4s a thread in flight (then kLoads more at a time
/// where the span is longer than the block's loads), a warp's combined, then the warps' combined
/// pairwise.
template <class Op, unsigned kLoads>
__device__ typename Op::Value block_value(const Span& span) {
  using Value = typename Op::Value;
  __shared__ Value warp_values[kThreads / kWarp];
  FirstLoads<kThreads, kLoads> loads;
  loads.issue(span, threadIdx.x);
  const Value mine = Op::warp_combine(loads.template finish<Op>(span, threadIdx.x));
  if (threadIdx.x % kWarp == 0) warp_values[threadIdx.x / kWarp] = mine;
  __syncthreads();
  Value values[kThreads / kWarp];
#pragma unroll
  for (unsigned w = 0; w < kThreads / kWarp; ++w) values[w] = warp_values[w];
  combine_pairwise<Op>(values);
  return values[0];
}

/// Elements of a part that a block of split_rows with kLoads float4s a thread reads at once.
template <unsigned kLoads>
constexpr std::int64_t part_of = std::int64_t{kThreads} * 4 * kLoads;

/// Rows split by their average: block b reads part b % parts of row b / parts (parts equal shares
/// of the row, whatever its length), its loads all in flight at once. A row of one part is
/// stored, a longer row's parts write their partials for listed_chunks; a row longer than
/// parts * part_of<kLoads> * 4 is listed instead. No list, no atomics: every block knows its
/// place from its index.
template <class Op, unsigned kLoads>
__global__ __launch_bounds__(kThreads) void split_rows(const float* __restrict__ in,
                                                       const std::int64_t* __restrict__ offsets,
                                                       std::size_t segments, unsigned parts,
                                                       Lists lists, float* __restrict__ out,
                                                       typename Op::Value* __restrict__ row_parts) {
  let_next_grid_start();
  const std::size_t s = blockIdx.x / parts;
  const unsigned part = blockIdx.x % parts;
  const std::int64_t begin = offsets[s], end = offsets[s + 1], length = end - begin;
  if (too_long_to_split(length, parts, part_of<kLoads>)) {
    if (part == 0 && threadIdx.x < kWarp) lists.add(s, length, threadIdx.x);
    return;
  }
  const std::int64_t share = (length + parts - 1) / parts;
  const std::int64_t from = begin + (part * share < length ? part * share : length);
  const std::int64_t to = begin + ((part + 1) * share < length ? (part + 1) * share : length);
  const auto v = block_value<Op, kLoads>(cut(in, from, to));
  if (threadIdx.x != 0) return;
  if (parts == 1)
    Op::store(out, s, v);
  else
    row_parts[blockIdx.x] = v;
}

/// Rows split by split_rows in several parts, as listed_chunks finds them.
template <class Value>
struct SplitParts {
  std::size_t segments = 0;
  unsigned parts = 0;     ///< parts a row: none to combine unless more than one
  std::int64_t part = 0;  ///< elements a block of split_rows reads at once
  const Value* row_parts = nullptr;
};

/// Where a listed chunk lies: its item and its row's bounds.
struct Placed {
  Item item;
  std::int64_t begin, end;
};

/// Once the tier's kernel has ended: first the rows \p split cut in several parts, a warp each,
/// their parts combined in part order (the rows split_rows listed are read below); then the
/// listed chunks, a warp each: warp w takes chunks w, w + (warps in the grid), ..., and loads the
/// next one's place while the current one's loads are in flight. A row of one chunk is stored; a
/// longer row's chunk writes its partial, and the warp that finishes the row's last chunk
/// combines them all in chunk order.
template <class Op>
__global__ __launch_bounds__(kThreads, kListedBlocksPerSm) void listed_chunks(
    const float* __restrict__ in, const std::int64_t* __restrict__ offsets, float* __restrict__ out,
    Lists lists, typename Op::Value* __restrict__ partials, SplitParts<typename Op::Value> split) {
  wait_for_previous_grid();  // the lists and the split rows' parts are complete and visible
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warps = gridDim.x * (kThreads / kWarp);
  const unsigned warp = (blockIdx.x * kThreads + threadIdx.x) / kWarp;
  if (split.parts > 1)
    for (std::size_t s = warp; s < split.segments; s += warps)
      if (!too_long_to_split(offsets[s + 1] - offsets[s], split.parts, split.part))
        store_in_order<Op>(out, s, split.row_parts + s * split.parts, split.parts, lane);
  const unsigned total = lists.counters[0];
  const auto place = [&](unsigned i) {
    Placed p{};
    if (i < total) {
      p.item = lists.items[i];
      p.begin = offsets[p.item.segment];
      p.end = offsets[p.item.segment + 1];
    }
    return p;
  };
  unsigned i = warp;
  Placed here = place(i);
  for (; i < total; i += warps) {
    const std::int64_t from = here.begin + static_cast<std::int64_t>(here.item.chunk) * kChunk;
    const Span span = cut(in, from, from + kChunk < here.end ? from + kChunk : here.end);
    FirstLoads<kWarp, kChunkLoads> loads;
    loads.issue(span, lane);
    const Placed next = place(i + warps);
    const auto v = Op::warp_combine(loads.template finish<Op>(span, lane));
    bool last = false;
    if (lane == 0) {
      if (here.item.row == kOneChunk) {
        Op::store(out, here.item.segment, v);
      } else {
        partials[i] = v;
        __threadfence();  // the partial is visible before the count of chunks left says so
        last = atomicSub(&lists.long_rows[here.item.row].left, 1u) == 1;
      }
    }
    if (__shfl_sync(kFullMask, last, 0)) {  // every other chunk of the row has its partial
      __threadfence();
      const LongRow row = load_from_l2(lists.long_rows + here.item.row);
      store_in_order<Op>(out, here.item.segment, partials + row.first, row.chunks, lane);
    }
    here = next;
  }
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

/// Launches \p kernel on \p stream so that it may start before the previous kernel ends (it
/// waits for it with wait_for_previous_grid()).
template <class... Params, class... Args>
void launch_overlapped(void (*kernel)(Params...), unsigned blocks, cudaStream_t stream,
                       Args... args) {
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  REDUCE_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...));
}

/// The workspace's lists and partials.
template <class Op>
struct Places {
  Lists lists;
  typename Op::Value* partials;
  typename Op::Value* row_parts;
  Places(Workspace workspace, std::size_t n, std::size_t segments) {
    const Layout layout(n, segments, sizeof(typename Op::Value));
    char* base = workspace.as<char>();
    lists = {reinterpret_cast<unsigned*>(base), reinterpret_cast<Item*>(base + layout.items),
             reinterpret_cast<LongRow*>(base + layout.long_rows)};
    partials = reinterpret_cast<typename Op::Value*>(base + layout.partials);
    row_parts = reinterpret_cast<typename Op::Value*>(base + layout.parts);
  }
};

/// The launch after the tier's kernel: the listed chunks (and the parts of the rows \p split cut
/// in several parts).
template <class Op>
void run_listed(const float* in, const std::int64_t* offsets, float* out, const Places<Op>& places,
                SplitParts<typename Op::Value> split, cudaStream_t stream) {
  static const unsigned listed_grid = resident_blocks(listed_chunks<Op>);
  launch_overlapped(listed_chunks<Op>, listed_grid, stream, in, offsets, out, places.lists,
                    places.partials, split);
}

/// Zeroes the lists' counters: a memset, which the stream runs before the tier's kernel.
inline void clear_counters(const Lists& lists, cudaStream_t stream) {
  REDUCE_CUDA_CHECK(cudaMemsetAsync(lists.counters, 0, 2 * sizeof(unsigned), stream));
}

/// The launches of one tier of groups (see the top of this file).
template <class Op, unsigned kLanes, unsigned kLoads, unsigned kRows, unsigned kBlocksPerSm = 1>
void run_tier(const float* in, std::size_t n, const std::int64_t* offsets, std::size_t segments,
              float* out, Workspace workspace, cudaStream_t stream) {
  const Places<Op> places(workspace, n, segments);
  constexpr std::size_t kRowsPerBlock = kThreads / kLanes * kRows;
  const auto blocks = static_cast<unsigned>((segments + kRowsPerBlock - 1) / kRowsPerBlock);
  clear_counters(places.lists, stream);
  group_rows<Op, kLanes, kLoads, kRows, kBlocksPerSm>
      <<<blocks, kThreads, 0, stream>>>(in, offsets, segments, out, places.lists);
  REDUCE_CUDA_CHECK_LAUNCH();
  run_listed<Op>(in, offsets, out, places, {}, stream);
}

/// The launches of a tier of short rows (short_rows, then the listed rows' kernels).
template <class Op, unsigned kLanes, unsigned kLoads, unsigned kBlocksPerSm>
void run_short(const float* in, std::size_t n, const std::int64_t* offsets, std::size_t segments,
               float* out, Workspace workspace, cudaStream_t stream) {
  const Places<Op> places(workspace, n, segments);
  constexpr std::size_t kRowsPerBlock = kThreads / kLanes;
  const auto blocks = static_cast<unsigned>((segments + kRowsPerBlock - 1) / kRowsPerBlock);
  clear_counters(places.lists, stream);
  short_rows<Op, kLanes, kLoads, kBlocksPerSm>
      <<<blocks, kThreads, 0, stream>>>(in, n, offsets, segments, out, places.lists);
  REDUCE_CUDA_CHECK_LAUNCH();
  run_listed<Op>(in, offsets, out, places, {}, stream);
}

/// The launches of rows split by their average: parts of up to part_of<kLoads> elements.
template <class Op, unsigned kLoads>
void run_split(const float* in, std::size_t n, const std::int64_t* offsets, std::size_t segments,
               float* out, Workspace workspace, cudaStream_t stream) {
  const Places<Op> places(workspace, n, segments);
  const std::size_t average = n / segments;
  const auto parts = static_cast<unsigned>((average + part_of<kLoads> - 1) / part_of<kLoads>);
  clear_counters(places.lists, stream);
  split_rows<Op, kLoads><<<static_cast<unsigned>(segments * parts), kThreads, 0, stream>>>(
      in, offsets, segments, parts, places.lists, out, places.row_parts);
  REDUCE_CUDA_CHECK_LAUNCH();
  run_listed<Op>(in, offsets, out, places, {segments, parts, part_of<kLoads>, places.row_parts},
                 stream);
}

/// Picks the tier from the rows' average length (n / segments bounds it from above).
template <class Op>
void run(const float* in, std::size_t n, const std::int64_t* offsets, std::size_t segments,
         float* out, Workspace workspace, cudaStream_t stream) {
  if (segments == 0) return;
  const std::size_t average = n / segments;
  if (average <= 16)  // a thread per row, its four float4s in flight
    run_short<Op, 1, 4, 6>(in, n, offsets, segments, out, workspace, stream);
  else if (average <= 32)  // several rows per warp
    run_short<Op, 2, 4, 6>(in, n, offsets, segments, out, workspace, stream);
  else if (average <= 64)
    run_short<Op, 4, 4, 6>(in, n, offsets, segments, out, workspace, stream);
  else if (average <= 128)
    run_tier<Op, 4, 4, 1>(in, n, offsets, segments, out, workspace, stream);
  else if (average <= 256)
    run_tier<Op, 8, 4, 1>(in, n, offsets, segments, out, workspace, stream);
  else if (average <= 1024)  // a warp per row
    run_tier<Op, 32, 4, 1, 6>(in, n, offsets, segments, out, workspace, stream);
  else if (average < static_cast<std::size_t>(kSplitFrom))
    run_tier<Op, 32, 8, 1>(in, n, offsets, segments, out, workspace, stream);
  else if (average <= static_cast<std::size_t>(part_of<4>))  // a block per row
    run_split<Op, 4>(in, n, offsets, segments, out, workspace, stream);
  else if (average < static_cast<std::size_t>(part_of<16>))  // a block per row or half-row
    run_split<Op, 8>(in, n, offsets, segments, out, workspace, stream);
  else  // a block per part of 16384 elements or so
    run_split<Op, 16>(in, n, offsets, segments, out, workspace, stream);
}

}  // namespace reduce::segmented
