// The device side of the graded benchmark's inputs (timed_inputs.hpp): one memory-bound pass that
// writes a whole input from its recipe and adds up its tally.
#include "timed_inputs.hpp"

#include <reduce/cuda_check.cuh>

#include <algorithm>

namespace reduce::timed {
namespace {

constexpr unsigned kThreads = 256;

/// Every thread writes its elements (a grid-stride loop, coalesced) and keeps its share of the
/// tally in registers; a block adds its threads' shares and makes one atomic addition of each.
/// The recipe stays in the kernel's parameter space (__grid_constant__: indexing its arrays does
/// not copy it per thread).
__global__ void __launch_bounds__(kThreads)
    regenerate_kernel(float* x, const __grid_constant__ Recipe r, Tally* tally) {
  std::int64_t integers = 0;
  double magnitudes = 0;
  const bool weigh = r.content == Content::kCancelling;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < r.n;
       i += stride) {
    const Element e = element_at(r, i);
    x[i] = e.value;
    integers += e.integer;
    if (weigh) magnitudes += fabsf(e.value);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    integers += __shfl_down_sync(0xFFFFFFFFu, integers, offset);
    magnitudes += __shfl_down_sync(0xFFFFFFFFu, magnitudes, offset);
  }
  __shared__ std::int64_t warp_integers[kThreads / 32];
  __shared__ double warp_magnitudes[kThreads / 32];
  if (threadIdx.x % 32 == 0) {
    warp_integers[threadIdx.x / 32] = integers;
    warp_magnitudes[threadIdx.x / 32] = magnitudes;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  integers = 0;
  magnitudes = 0;
  for (unsigned w = 0; w < kThreads / 32; ++w) {
    integers += warp_integers[w];
    magnitudes += warp_magnitudes[w];
  }
  // Two's complement: adding the int64's bits as unsigned is adding the integer.
  if (integers != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(&tally->integers),
              static_cast<unsigned long long>(integers));
  if (magnitudes != 0) atomicAdd(&tally->magnitudes, magnitudes);
}

/// One wave: as many blocks as the device holds at once.
unsigned wave_blocks() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, regenerate_kernel, kThreads, 0));
    return static_cast<unsigned>(std::max(1, sms * std::max(1, per_sm)));
  }();
  return blocks;
}

}  // namespace

void regenerate(float* x, const Recipe& r, Tally* tally, cudaStream_t stream) {
  if (r.n == 0) return;
  const std::size_t wanted = (r.n + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(wanted, wave_blocks()));
  regenerate_kernel<<<blocks, kThreads, 0, stream>>>(x, r, tally);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce::timed
