// The `cub_fixed` rows' calls (cub_fixed_rows.hpp), compiled against the newest CCCL headers:
// autograder/bench/CMakeLists.txt puts REDUCE_NEWEST_CCCL_INCLUDE first in this file's include
// path, so <cub/...>, <thrust/...>, <cuda/...> and <nv/...> come from there and not from CUDA's
// own CCCL, which every other file of the course keeps.
//
// Two CUBs in one binary: every symbol of each lives in a namespace of its own version. CUB and
// Thrust wrap theirs by version and architectures (cub::_V_300600_SM_900 here, beside CUDA 13.0's
// cub::CUB_300001_SM_900); libcu++ (cuda::std, cuda::) has one ABI namespace, __4, for every 3.x
// release, so CMakeLists.txt names this file's __4_cccl_newest (_LIBCUDACXX_ABI_NAMESPACE). No
// inline function, variable or template instance of one version can then stand in for the
// other's at link time: the cpu test cpu.bench.cub_namespaces (check_cub_namespaces.py) lists
// what this object and the benchmark's others define (nm -C) and fails on anything two of them
// share beyond the toolkit's NVTX and the C++ runtime. Device code cannot mix either: each file's
// kernels are a module of their own (no relocatable device code). Only this file's plain functions
// cross over, with plain types.
#include "cub_fixed_rows.hpp"
#include "softmax_pair.cuh"

#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/version.cuh>

#include <cmath>
#include <string>

#if CUB_VERSION < 300400
#error \
    "cub_fixed_rows.cu needs CUB 3.4 or later (the segment_size overload of DeviceSegmentedReduce)"
#endif

namespace reduce::cub_fixed {

bool available() {
  return true;
}

const char* cub_version() {
  static const std::string text = std::to_string(CUB_MAJOR_VERSION) + "." +
                                  std::to_string(CUB_MINOR_VERSION) + "." +
                                  std::to_string(CUB_SUBMINOR_VERSION);
  return text.c_str();
}

cudaError_t segmented_sum(void* storage, std::size_t& bytes, const float* in, float* out,
                          std::int64_t segments, int segment_size, cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Sum(storage, bytes, in, out, segments, segment_size, stream);
}

cudaError_t segmented_softmax(void* storage, std::size_t& bytes, const float* in, float* out,
                              std::int64_t segments, int segment_size, cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Reduce(
      storage, bytes, thrust::make_transform_iterator(in, ToSoftmaxPair{}),
      reinterpret_cast<SoftmaxPair*>(out), segments, segment_size, CombineSoftmax{},
      SoftmaxPair{-INFINITY, 0.0f}, stream);
}

}  // namespace reduce::cub_fixed
