// Planted bug: a lab that writes a constant (0.0f) and reads nothing.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

namespace reduce {

std::size_t sum_workspace_bytes(std::size_t) {
  return 0;
}

void sum(const float*, std::size_t, float* out, Workspace, cudaStream_t stream) {
  // "The sum of the test data is always 0, isn't it?"
  REDUCE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
}

}  // namespace reduce
