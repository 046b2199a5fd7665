// The `cub_fixed` rows where the newest CCCL headers were not found at configure time
// (cub_fixed_rows.hpp): their calls fail, and bench_segmented() skips their rows with kAbsent.
#include "cub_fixed_rows.hpp"

namespace reduce::cub_fixed {

bool available() {
  return false;
}

const char* cub_version() {
  return "";
}

cudaError_t segmented_sum(void*, std::size_t&, const float*, float*, std::int64_t, int,
                          cudaStream_t) {
  return cudaErrorNotSupported;
}

cudaError_t segmented_softmax(void*, std::size_t&, const float*, float*, std::int64_t, int,
                              cudaStream_t) {
  return cudaErrorNotSupported;
}

}  // namespace reduce::cub_fixed
