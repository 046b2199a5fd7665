// Planted: the warp step adds its lanes' sums without rescaling them to the warp's maximum.
// Lab 17: softmax's statistics of every segment, the maximum m and the sum of exp(x - m), in one
// read of the input, through the tiers of segmented_tiers.cuh.
#include "segmented_tiers.cuh"

#include <reduce/lab.cuh>

#include <cmath>

namespace reduce {
namespace {

/// exp(y) as __expf computes it, 2^(y log2(e)) by one ex2.approx, but with results below 2^-126
/// flushed to zero: __expf keeps them, at three more instructions per call (sm_90). What is
/// flushed is under 2^-126 of a row's sum, which holds a term of 1.
__device__ inline float exp_flushed(float y) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y * 1.44269504088896341f));
  return r;
}

/// Softmax's statistics: the running maximum m and the sum s of exp(x - m) over the elements
/// seen. Two pairs combine by rescaling the one with the smaller maximum (online softmax).
struct SoftmaxOp {
  struct Value {
    float max, sum;
  };
  __device__ static Value identity() { return {-INFINITY, 0.0f}; }
  __device__ static Value element(float x) { return {x, 1.0f}; }
  /// What stands in for a float of a window that lies outside the row: no maximum, exp of 0.
  __device__ static float pad() { return -INFINITY; }
  /// The first \p count float4s of \p v: their maximum first, then one exp per element against
  /// it (no rescaling), added pairwise.
  template <unsigned kCount>
  __device__ static Value fold(const float4 (&v)[kCount], unsigned count) {
    float max = -INFINITY;
#pragma unroll
    for (unsigned k = 0; k < kCount; ++k)
      if (k < count) max = fmaxf(max, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    float sums[kCount];
#pragma unroll
    for (unsigned k = 0; k < kCount; ++k)
      sums[k] = k < count ? (exp_flushed(v[k].x - max) + exp_flushed(v[k].y - max)) +
                                (exp_flushed(v[k].z - max) + exp_flushed(v[k].w - max))
                          : 0.0f;
#pragma unroll
    for (unsigned width = 1; width < kCount; width *= 2)
#pragma unroll
      for (unsigned k = 0; k + width < kCount; k += 2 * width) sums[k] += sums[k + width];
    return {max, sums[0]};
  }
  /// Without branches: the smaller maximum's sum is rescaled, by exactly 1 when the maxima are
  /// equal (which also keeps two empty pairs from making exp(-inf - -inf), a NaN).
  __device__ static Value combine(Value a, Value b) {
    const bool a_larger = a.max >= b.max;
    const float max = a_larger ? a.max : b.max, smaller = a_larger ? b.max : a.max;
    const float kept = a_larger ? a.sum : b.sum, scaled = a_larger ? b.sum : a.sum;
    return {max, kept + scaled * (smaller == max ? 1.0f : exp_flushed(smaller - max))};
  }
  __device__ static Value shuffle_xor(Value v, unsigned mask) {
    return {__shfl_xor_sync(segmented::kFullMask, v.max, mask),
            __shfl_xor_sync(segmented::kFullMask, v.sum, mask)};
  }
  /// The warp's maximum first, then each lane rescales its sum once and the sums are added: one
  /// exp per lane where a butterfly of combine() would take five.
  __device__ static Value warp_combine(Value v) {
    float max = v.max;
    for (unsigned mask = 16; mask > 0; mask >>= 1)
      max = fmaxf(max, __shfl_xor_sync(segmented::kFullMask, max, mask));
    float sum = v.sum;  // planted: the lanes' sums added without rescaling to the warp's maximum
    for (unsigned mask = 16; mask > 0; mask >>= 1)
      sum += __shfl_xor_sync(segmented::kFullMask, sum, mask);
    return {max, sum};
  }
  /// One 8-byte store where out is 8-byte aligned.
  __device__ static void store(float* out, std::size_t s, Value v) {
    if (reinterpret_cast<std::uintptr_t>(out) % sizeof(float2) == 0) {
      *reinterpret_cast<float2*>(out + 2 * s) = {v.max, v.sum};
    } else {
      out[2 * s] = v.max;
      out[2 * s + 1] = v.sum;
    }
  }
};

}  // namespace

std::size_t segmented_softmax_workspace_bytes(std::size_t n, std::size_t segments) {
  return segmented::workspace_bytes<SoftmaxOp>(n, segments);
}

void segmented_softmax(const float* in, std::size_t n, const std::int64_t* offsets,
                       std::size_t segments, float* out, Workspace workspace, cudaStream_t stream) {
  segmented::run<SoftmaxOp>(in, n, offsets, segments, out, workspace, stream);
}

}  // namespace reduce
