// The capstone's measure: cub::DeviceReduce::Sum as a lab library of the course's sum contract,
// built once for each sum mode. The grader's benchmark times it exactly as it times the capstone
// (a lab process, every input made anew before every call), so the capstone's fraction of it is
// "how close to CUB" on whatever GPU grades it, at every size the rubric names. CUB's reduction
// is deterministic (no atomics, a fixed tree for a given n and GPU), so it is the measure of both
// modes.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cub/device/device_reduce.cuh>

namespace reduce {

std::size_t sum_workspace_bytes(std::size_t n) {
  std::size_t bytes = 0;
  REDUCE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                                           static_cast<float*>(nullptr), n));
  return bytes;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  std::size_t bytes = workspace.bytes;
  REDUCE_CUDA_CHECK(cub::DeviceReduce::Sum(workspace.data, bytes, in, out, n, stream));
}

}  // namespace reduce
