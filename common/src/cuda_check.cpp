#include <reduce/cuda_check.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {

CudaError::CudaError(cudaError_t code, const char* call, const char* file, int line)
    : std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(code) + " (" +
                         cudaGetErrorString(code) + ") in " + call + " at " + file + ":" +
                         std::to_string(line)),
      code_(code) {}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, call, file, line);
}

std::string lab_relative_path(const std::string& source_file) {
  const auto file_start = source_file.find_last_of('/');
  if (file_start == std::string::npos) return "labs/" + source_file;
  const auto folder_start = source_file.find_last_of('/', file_start - 1);
  const auto from = folder_start == std::string::npos ? 0 : folder_start + 1;
  return "labs/" + source_file.substr(from);
}

NotImplemented::NotImplemented(const std::string& source_file)
    : std::logic_error("not implemented: see " + lab_relative_path(source_file)) {}

}  // namespace reduce
