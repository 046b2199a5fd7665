// Planted bug: correct but far too slow: 64 blocks of one thread, each adding a 1/64 share of
// the input in a serial loop, then one thread adding the 64 partial sums.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

namespace reduce {
namespace {

constexpr unsigned kBlocks = 64;

/// One thread per block: block b adds its contiguous chunk in a serial loop.
__global__ void serial_chunks(const float* __restrict__ in, std::size_t n, std::size_t chunk,
                              float* __restrict__ out) {
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * chunk;
  const std::size_t end = begin + chunk < n ? begin + chunk : n;
  float total = 0.0f;
  for (std::size_t i = begin; i < end; ++i) total += in[i];
  out[blockIdx.x] = total;
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t) {
  return kBlocks * sizeof(float);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  const std::size_t chunk = n == 0 ? 1 : (n + kBlocks - 1) / kBlocks;
  float* partials = workspace.as<float>();
  serial_chunks<<<kBlocks, 1, 0, stream>>>(in, n, chunk, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  serial_chunks<<<1, 1, 0, stream>>>(partials, kBlocks, kBlocks, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
