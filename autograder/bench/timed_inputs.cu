// The device side of the graded benchmark's inputs (timed_inputs.hpp): one memory-bound pass that
// writes a whole input from its recipe and adds up its tally.
#include "timed_inputs.hpp"

#include <reduce/cuda_check.cuh>

#include <algorithm>
#include <cstdint>

namespace reduce::timed {
namespace {

constexpr unsigned kThreads = 256;

/// Every thread writes its elements (a grid-stride loop, coalesced) and keeps its share of the
/// tally in registers; a block adds its threads' shares and makes one atomic addition of each.
/// The recipe stays in the kernel's parameter space (__grid_constant__: indexing its arrays does
/// not copy it per thread). With \p kQuads (x 16-byte aligned) a thread writes four elements at a
/// time with one 16-byte store, and hashes a run of the sum's input once for the four (a run holds
/// at least four elements, and four start at a multiple of four): the pass is bound by its stores,
/// not by its 64-bit hashes.
template <bool kQuads>
__global__ void __launch_bounds__(kThreads)
    regenerate_kernel(float* x, const __grid_constant__ Recipe r, Tally* tally) {
  std::int64_t integers = 0;
  double magnitudes = 0;
  const bool weigh = r.content == Content::kCancelling;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t scalar_from = 0;
  if constexpr (kQuads) {
    const bool shared_runs = r.content == Content::kIntegers && r.run_shift >= 2;
    const std::size_t quads = r.n / 4;
    for (std::size_t q = first; q < quads; q += stride) {
      const std::size_t i = q * 4;
      Element e[4];
      if (shared_runs) {
        const std::uint64_t h = mix(r.seed, i >> r.run_shift);
#pragma unroll
        for (int k = 0; k < 4; ++k) e[k] = run_element(r, h, i + k);
      } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) e[k] = element_at(r, i + k);
      }
      reinterpret_cast<float4*>(x)[q] = make_float4(e[0].value, e[1].value, e[2].value, e[3].value);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        integers += e[k].integer;
        if (weigh) magnitudes += fabsf(e[k].value);
      }
    }
    scalar_from = quads * 4;
  }
  for (std::size_t i = scalar_from + first; i < r.n; i += stride) {
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
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, regenerate_kernel<true>, kThreads, 0));
    return static_cast<unsigned>(std::max(1, sms * std::max(1, per_sm)));
  }();
  return blocks;
}

}  // namespace

void regenerate(float* x, const Recipe& r, Tally* tally, cudaStream_t stream) {
  if (r.n == 0) return;
  const std::size_t wanted = (r.n + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(wanted, wave_blocks()));
  if (reinterpret_cast<std::uintptr_t>(x) % sizeof(float4) == 0) {
    regenerate_kernel<true><<<blocks, kThreads, 0, stream>>>(x, r, tally);
  } else {
    regenerate_kernel<false><<<blocks, kThreads, 0, stream>>>(x, r, tally);
  }
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce::timed
