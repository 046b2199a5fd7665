// Lab 17: the sum of every segment, through the tiers of segmented_tiers.cuh.
#include "segmented_tiers.cuh"

#include <reduce/lab.cuh>

#include <cmath>

namespace reduce {
namespace {

/// The sum: floats added.
struct SumOp {
  using Value = float;
  __device__ static Value identity() { return 0.0f; }
  __device__ static Value element(float x) { return x; }
  /// What stands in for a float of a window that lies outside the row.
  __device__ static float pad() { return 0.0f; }
  /// The first \p count float4s of \p v, pairwise.
  template <unsigned kCount>
  __device__ static Value fold(const float4 (&v)[kCount], unsigned count) {
    Value sums[kCount];
#pragma unroll
    for (unsigned k = 0; k < kCount; ++k)
      sums[k] = k < count ? (v[k].x + v[k].y) + (v[k].z + v[k].w) : 0.0f;
    segmented::combine_pairwise<SumOp>(sums);
    return sums[0];
  }
  __device__ static Value combine(Value a, Value b) { return a + b; }
  __device__ static Value shuffle_xor(Value v, unsigned mask) {
    return __shfl_xor_sync(segmented::kFullMask, v, mask);
  }
  __device__ static Value warp_combine(Value v) { return segmented::butterfly<SumOp>(v); }
  __device__ static void store(float* out, std::size_t s, Value v) { out[s] = v; }
};

}  // namespace

std::size_t segmented_sum_workspace_bytes(std::size_t n, std::size_t segments) {
  return segmented::workspace_bytes<SumOp>(n, segments);
}

void segmented_sum(const float* in, std::size_t n, const std::int64_t* offsets,
                   std::size_t segments, float* out, Workspace workspace, cudaStream_t stream) {
  segmented::run<SumOp>(in, n, offsets, segments, out, workspace, stream);
}

}  // namespace reduce
