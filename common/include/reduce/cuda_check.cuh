/// \file
/// \brief One error check for every CUDA runtime call: it names the call, the file and the line.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace reduce {

/// A failed CUDA runtime call, with the call's text and where it was made.
class CudaError : public std::runtime_error {
 public:
  /// \param code the status the call returned
  /// \param call the call as written in the source
  /// \param file source file of the call
  /// \param line source line of the call
  CudaError(cudaError_t code, const char* call, const char* file, int line);

  /// The status the failed call returned.
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

/// Throws CudaError for \p code; used by REDUCE_CUDA_CHECK.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace reduce

/// Evaluates a CUDA runtime call once and throws reduce::CudaError if it did not succeed.
#define REDUCE_CUDA_CHECK(call)                                              \
  do {                                                                       \
    const cudaError_t reduce_status_ = (call);                               \
    if (reduce_status_ != cudaSuccess) {                                     \
      ::reduce::throw_cuda_error(reduce_status_, #call, __FILE__, __LINE__); \
    }                                                                        \
  } while (0)

/// Checks the launch of the kernel just queued (configuration errors, not faults inside it).
#define REDUCE_CUDA_CHECK_LAUNCH() REDUCE_CUDA_CHECK(cudaGetLastError())
