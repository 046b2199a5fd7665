#include <reduce/cuda_check.cuh>

namespace reduce {

CudaError::CudaError(cudaError_t code, const char* call, const char* file, int line)
    : std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(code) + " (" +
                         cudaGetErrorString(code) + ") in " + call + " at " + file + ":" +
                         std::to_string(line)),
      code_(code) {}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, call, file, line);
}

}  // namespace reduce
