// The cub::DeviceSegmentedReduce calls of lab 17's rows (SegmentedOp::cub), apart from
// segmented_inputs.cu: each file that instantiates CUB takes seconds to compile, and the
// benchmark's build waits for its longest file.
#include "segmented.cuh"
#include "softmax_pair.cuh"

#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <cmath>

namespace reduce::bench {

cudaError_t cub_segmented_sum(void* storage, std::size_t& bytes, const float* in,
                              const std::int64_t* offsets, std::size_t segments, float* out,
                              cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Sum(
      storage, bytes, in, out, static_cast<std::int64_t>(segments), offsets, offsets + 1, stream);
}

cudaError_t cub_segmented_softmax(void* storage, std::size_t& bytes, const float* in,
                                  const std::int64_t* offsets, std::size_t segments, float* out,
                                  cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Reduce(
      storage, bytes, thrust::make_transform_iterator(in, ToSoftmaxPair{}),
      reinterpret_cast<SoftmaxPair*>(out), static_cast<std::int64_t>(segments), offsets,
      offsets + 1, CombineSoftmax{}, SoftmaxPair{-INFINITY, 0.0f}, stream);
}

}  // namespace reduce::bench
