// Lab 17's operations, segmentations and inputs, and the comparison of results with CUB's (whose
// calls are in cub_segmented.cu).
#include "segmented.cuh"

#include "cub_fixed_rows.hpp"
#include "operations.cuh"
#include "softmax_pair.cuh"

#include <reduce/cuda_check.cuh>
#include <reduce/generators.hpp>
#include <reduce/keyed_hash.hpp>
#include <reduce/reference.hpp>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>

namespace reduce::bench {
namespace {

__global__ void fill_uniform_offsets(std::int64_t* offsets, std::size_t segments,
                                     std::size_t length) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t s = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       s <= segments; s += stride)
    offsets[s] = static_cast<std::int64_t>(s * length);
}

/// The sum's input: +1 or -1.
__global__ void fill_signs(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = (reduce::mix(seed, i) & 1) != 0 ? 1.0f : -1.0f;
}

/// Softmax's input: -3.5 to 0 in steps of 0.5 (the maximum anywhere in a segment).
__global__ void fill_halves(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = -0.5f * static_cast<float>(reduce::mix(seed, i) & 7);
}

/// The graded rows' softmax input: -3.5 to 3.5 in steps of 0.5, so |x - m| <= 7 as before.
__global__ void fill_signed_halves(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = 0.5f *
           static_cast<float>(
               static_cast<int>(static_cast<std::uint32_t>(reduce::mix(seed, i) >> 32) % 15u) - 7);
}

/// Lanes of the warp that reduces one short segment.
constexpr unsigned kWarp = 32;

/// Expected results of segments of \p length <= kWarp floats each, a warp per segment: lane i
/// holds element i (the identity past the end), then a shuffle tree of depth 5. The sum (\p
/// Pairs false) is exact: every element is +1 or -1. Softmax's pairs (\p Pairs true) combine as
/// CUB's do (CombineSoftmax), at a depth below segment_tree_depth(length).
template <bool Pairs>
__global__ void reduce_short_segments(const float* x, std::size_t segments, unsigned length,
                                      float* out) {
  const unsigned lane = threadIdx.x % kWarp;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * blockDim.x / kWarp;
  // Every lane of a warp has the same segment: the loop and the shuffles are warp-uniform.
  for (std::size_t s = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / kWarp;
       s < segments; s += warps) {
    const bool inside = lane < length;
    const float v = inside ? x[s * length + lane] : 0.0f;
    if constexpr (!Pairs) {
      float sum = v;
      for (unsigned offset = kWarp / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xFFFFFFFFu, sum, offset);
      if (lane == 0) out[s] = sum;
    } else {
      SoftmaxPair p = inside ? ToSoftmaxPair{}(v) : SoftmaxPair{-INFINITY, 0.0f};
      for (unsigned offset = kWarp / 2; offset > 0; offset /= 2) {
        const SoftmaxPair other{__shfl_down_sync(0xFFFFFFFFu, p.max, offset),
                                __shfl_down_sync(0xFFFFFFFFu, p.sum, offset)};
        p = CombineSoftmax{}(p, other);
      }
      if (lane == 0) reinterpret_cast<SoftmaxPair*>(out)[s] = p;
    }
  }
}

/// Counts the results that differ from the expected ones: a sum bit for bit; of softmax's pair
/// the maximum by value (the maximum of -0 and +0 may be either) and the sum to within
/// \p relative of the expected one.
__global__ void count_mismatches(const float* got, const float* want, std::size_t count,
                                 std::size_t per_segment, float relative, unsigned* mismatches) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const bool ok = per_segment == 1 ? __float_as_uint(got[i]) == __float_as_uint(want[i])
                    : i % 2 == 0     ? got[i] == want[i]
                                     : fabsf(got[i] - want[i]) <= relative * want[i];
    if (!ok) atomicAdd(mismatches, 1u);
  }
}

/// Fills x[0, n) from \p seed: signs for the sum; for softmax, halves in [-3.5, 3.5] where
/// \p graded (a graded row's input), else in [-3.5, 0].
void fill_segmented_input(const SegmentedOp& op, float* x, std::size_t n, std::uint64_t seed,
                          bool graded) {
  switch (op.kind()) {
    case ResultKind::kSegments:
      fill_signs<<<kFillBlocks, kFillThreads>>>(x, n, seed);
      break;
    case ResultKind::kSegmentPairs:
      if (graded)
        fill_signed_halves<<<kFillBlocks, kFillThreads>>>(x, n, seed);
      else
        fill_halves<<<kFillBlocks, kFillThreads>>>(x, n, seed);
      break;
    case ResultKind::kFloat:
    case ResultKind::kIndex:
    case ResultKind::kApply:
      throw std::logic_error(op.name + " is no segmented operation");
  }
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace

const std::vector<SegmentedOp>& segmented_ops() {
  static const std::vector<SegmentedOp> ops = {
      {"segmented_sum", &cub_segmented_sum, &reduce::cub_fixed::segmented_sum},
      {"segmented_softmax", &cub_segmented_softmax, &reduce::cub_fixed::segmented_softmax}};
  return ops;
}

const SegmentedOp* find_segmented_op(const std::string& name) {
  for (const SegmentedOp& op : segmented_ops())
    if (op.name == name) return &op;
  return nullptr;
}

std::shared_ptr<const Segmentation> make_segmentation(std::size_t n, const SegmentShape& shape,
                                                      std::uint64_t seed) {
  auto fresh = std::make_shared<Segmentation>();
  fresh->n = n;
  fresh->shape = shape;
  if (!shape.ragged) {
    fresh->segments = n / shape.length;
    fresh->elements = fresh->segments * shape.length;
    fresh->min_length = fresh->max_length = shape.length;
    fresh->offsets = DeviceBuffer<std::int64_t>(fresh->segments + 1);
    fill_uniform_offsets<<<kFillBlocks, kFillThreads>>>(fresh->offsets.data(), fresh->segments,
                                                        shape.length);
    REDUCE_CUDA_CHECK_LAUNCH();
    REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    reduce::KeyedStream rng(reduce::derive_key(seed, "segmentation", shape.length));
    std::uniform_int_distribution<std::size_t> draw(shape.shortest(), shape.longest());
    std::vector<std::int64_t> offsets;
    offsets.reserve(n / shape.length + 2);
    offsets.push_back(0);
    std::size_t used = 0;
    fresh->min_length = shape.longest();
    for (;;) {
      const std::size_t length = draw(rng);
      if (used + length > n) break;
      used += length;
      offsets.push_back(static_cast<std::int64_t>(used));
      fresh->min_length = std::min(fresh->min_length, length);
      fresh->max_length = std::max(fresh->max_length, length);
    }
    fresh->segments = offsets.size() - 1;
    fresh->elements = used;
    fresh->offsets = DeviceBuffer<std::int64_t>(offsets);
  }
  return fresh;
}

double segmented_read_bytes(const Segmentation& seg, bool offsets) {
  return static_cast<double>(seg.elements) * sizeof(float) +
         (offsets ? static_cast<double>(seg.segments + 1) * sizeof(std::int64_t) : 0.0);
}

void fill_graded_segmented_input(const SegmentedOp& op, float* x, std::size_t n,
                                 std::uint64_t seed) {
  fill_segmented_input(op, x, n, seed, /*graded=*/true);
}

void expected_segment_results(const SegmentedOp& op, const float* x, const Segmentation& seg,
                              void* storage, std::size_t bytes, float* out) {
  if (!seg.shape.ragged && seg.shape.length <= kWarp && seg.segments > 0) {
    const auto length = static_cast<unsigned>(seg.shape.length);
    // Enough warps in flight to keep the memory busy: a warp's load is only 128 bytes.
    constexpr std::size_t kMaxBlocks = 16384, kWarpsPerBlock = kFillThreads / kWarp;
    const auto blocks = static_cast<unsigned>(
        std::min(kMaxBlocks, (seg.segments + kWarpsPerBlock - 1) / kWarpsPerBlock));
    if (op.per_segment() == 1)
      reduce_short_segments<false><<<blocks, kFillThreads>>>(x, seg.segments, length, out);
    else
      reduce_short_segments<true><<<blocks, kFillThreads>>>(x, seg.segments, length, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  REDUCE_CUDA_CHECK(op.cub(storage, bytes, x, seg.offsets.data(), seg.segments, out, nullptr));
}

void count_segment_mismatches(const SegmentedOp& op, const float* got, const float* want,
                              std::size_t segments, std::size_t longest, unsigned* mismatches,
                              cudaStream_t stream) {
  // Twice the contract's bound (reference.hpp) for the lab and for CUB, with |x - m| <= 7.
  const std::size_t depth = reduce::segment_tree_depth(longest);
  const auto relative = static_cast<float>(2 * reduce::softmax_sum_error_bound(depth, 1.0, 7.0));
  const std::size_t per_segment = op.per_segment();
  count_mismatches<<<kFillBlocks, kFillThreads, 0, stream>>>(got, want, segments * per_segment,
                                                             per_segment, relative, mismatches);
}

std::unique_ptr<SegmentedInputs> make_segmented_inputs(const SegmentedOp& op,
                                                       std::shared_ptr<const Segmentation> segments,
                                                       std::uint64_t seed) {
  auto fresh = std::make_unique<SegmentedInputs>();
  fresh->op = op.name;
  fresh->seg = std::move(segments);
  const Segmentation& seg = *fresh->seg;
  const SegmentShape& shape = seg.shape;
  fresh->x = DeviceBuffer<float>(std::max<std::size_t>(seg.elements, 1));
  fresh->expected = DeviceBuffer<float>(seg.segments * op.per_segment());
  fill_segmented_input(
      op, fresh->x.data(), seg.elements,
      reduce::derive_key(seed, "segmented.trusted", shape.length, shape.ragged ? 1 : 0),
      /*graded=*/false);
  std::size_t bytes = 0;
  REDUCE_CUDA_CHECK(op.cub(nullptr, bytes, fresh->x.data(), seg.offsets.data(), seg.segments,
                           fresh->expected.data(), nullptr));
  DeviceBuffer<unsigned char> storage(std::max<std::size_t>(bytes, 1));
  REDUCE_CUDA_CHECK(op.cub(storage.data(), bytes, fresh->x.data(), seg.offsets.data(), seg.segments,
                           fresh->expected.data(), nullptr));
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  return fresh;
}

}  // namespace reduce::bench
