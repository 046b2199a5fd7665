// Planted: lab 17's segmented sum handed to cub::DeviceSegmentedReduce::Sum, the counterpart the
// benchmark compares with. Correct and fast on long segments, but a library reduction.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cub/device/device_segmented_reduce.cuh>

namespace reduce {

std::size_t segmented_sum_workspace_bytes(std::size_t, std::size_t segments) {
  std::size_t bytes = 0;
  REDUCE_CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(
      nullptr, bytes, static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
      static_cast<std::int64_t>(segments), static_cast<const std::int64_t*>(nullptr),
      static_cast<const std::int64_t*>(nullptr)));
  return bytes;
}

void segmented_sum(const float* in, std::size_t, const std::int64_t* offsets, std::size_t segments,
                   float* out, Workspace workspace, cudaStream_t stream) {
  if (segments == 0) return;
  std::size_t bytes = workspace.bytes;
  REDUCE_CUDA_CHECK(cub::DeviceSegmentedReduce::Sum(workspace.data, bytes, in, out,
                                                    static_cast<std::int64_t>(segments), offsets,
                                                    offsets + 1, stream));
}

}  // namespace reduce
