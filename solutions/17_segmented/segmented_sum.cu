// Lab 17: the sum of every segment, through the three tiers of segmented_tiers.cuh.
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
