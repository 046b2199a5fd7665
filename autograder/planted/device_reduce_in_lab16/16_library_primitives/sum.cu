// Planted cheat: lab 16 allows CUB's block- and warp-level primitives, so a student tries the
// device-wide reduction from the same library. It must still be refused.
#include <reduce/lab.cuh>

#include <cub/device/device_reduce.cuh>

namespace reduce {

std::size_t sum_workspace_bytes(std::size_t n) {
  std::size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                         static_cast<float*>(nullptr), static_cast<int>(n));
  return bytes;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  std::size_t bytes = workspace.bytes;
  cub::DeviceReduce::Sum(workspace.data, bytes, in, out, static_cast<int>(n), stream);
}

}  // namespace reduce
