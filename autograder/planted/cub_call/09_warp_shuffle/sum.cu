// Planted bug: the lab hands the work to cub::DeviceReduce::Sum (a library reduction). Correct
// and fast, and worth nothing: the grader finds CUB's symbols in the built library.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cub/device/device_reduce.cuh>

#include <cstdint>

namespace reduce {

std::size_t sum_workspace_bytes(std::size_t n) {
  std::size_t bytes = 0;
  REDUCE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                                           static_cast<float*>(nullptr),
                                           static_cast<std::int64_t>(n)));
  return bytes;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  std::size_t bytes = workspace.bytes;
  REDUCE_CUDA_CHECK(
      cub::DeviceReduce::Sum(workspace.data, bytes, in, out, static_cast<std::int64_t>(n), stream));
}

}  // namespace reduce
