// The benchmark's `cub_fixed` rows: cub::DeviceSegmentedReduce with the `segment_size` overload
// (rows of one fixed length, no offsets read), which only the newest CUB has (3.4 and later; CUDA
// 13.0 ships CUB 3.0.1). Declared here with plain types only, so that reduce_bench.cu, built
// against CUDA's own CUB, never sees a type of the newest one.
//
// Two translation units define these functions, one of them per build (autograder/bench/
// CMakeLists.txt): cub_fixed_rows.cu, compiled with the newest CCCL headers (PyPI's cuda-cccl,
// REDUCE_NEWEST_CCCL_INCLUDE) first in its include path, and cub_fixed_absent.cpp where they
// were not found at configure time, whose calls fail and whose rows say why.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace reduce::cub_fixed {

/// What a row of cub_fixed_absent.cpp says.
inline constexpr const char* kAbsent =
    "cub_fixed: the newest CCCL headers (PyPI cuda-cccl) were not found at configure time";

/// Whether this binary holds the `segment_size` calls.
bool available();

/// The CUB version they were built against ("3.6.0"), or "" where they are absent.
const char* cub_version();

/// cub::DeviceSegmentedReduce::Sum over \p segments rows of \p segment_size floats at \p in, one
/// float per row at \p out; CUB's two-phase storage protocol (null \p storage: only \p bytes).
cudaError_t segmented_sum(void* storage, std::size_t& bytes, const float* in, float* out,
                          std::int64_t segments, int segment_size, cudaStream_t stream);

/// cub::DeviceSegmentedReduce::Reduce with online softmax's pair (as reduce_bench.cu's offsets
/// row): two floats per row at \p out, the maximum and the sum of exp(x - maximum).
cudaError_t segmented_softmax(void* storage, std::size_t& bytes, const float* in, float* out,
                              std::int64_t segments, int segment_size, cudaStream_t stream);

}  // namespace reduce::cub_fixed
