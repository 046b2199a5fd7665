/// \file
/// \brief The lab contract: the entry points a lab implements, and the scratch memory it gets.
///
/// Every lab implements one or more of the functions declared here in a file named after the
/// operation (labs/04_sequential/sum.cu defines reduce::sum). Tests and benchmarks are written
/// once per operation against these declarations and linked with one lab at a time.
///
/// Rules every implementation follows:
/// - input and output pointers are device pointers; the input is never modified;
/// - lengths are std::size_t and any n from 0 to beyond 2^31 is valid;
/// - all work is queued on \p stream and the function returns without synchronising;
/// - the workspace holds at least the bytes the matching *_workspace_bytes(n) asked for, and
///   its contents on entry are garbage (tests fill it with 0xFF): initialise what you use;
/// - errors are reported by throwing (REDUCE_CUDA_CHECK), never by printing or exiting.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace reduce {

/// Device scratch memory handed to a lab for one call.
struct Workspace {
  void* data = nullptr;    ///< device pointer, 256-byte aligned (cudaMalloc)
  std::size_t bytes = 0;   ///< usable size

  /// The workspace viewed as an array of \p T.
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data);
  }
};

/// Bytes of workspace that sum() needs for \p n elements (0 if none).
std::size_t sum_workspace_bytes(std::size_t n);

/// Writes the sum of in[0], ..., in[n-1] to *out. The sum of no elements is +0.0f.
/// \param in device input of \p n floats
/// \param n number of elements
/// \param out device pointer to one float
/// \param workspace scratch memory of sum_workspace_bytes(n) bytes
/// \param stream the stream all work is queued on
void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream);

/// The sum entry points of one lab, as a benchmark that loads several labs looks them up.
struct SumLab {
  std::size_t (*workspace_bytes)(std::size_t n);  ///< sum_workspace_bytes
  void (*run)(const float*, std::size_t, float*, Workspace, cudaStream_t);  ///< sum
};

}  // namespace reduce

/// Exported by every lab library that implements sum (common/src/export_sum.cu).
extern "C" const reduce::SumLab* reduce_sum_lab();
