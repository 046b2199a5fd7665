#include "mapped_input.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce_runner/protocol.hpp>

#include <algorithm>
#include <stdexcept>

namespace reduce::testing {

std::string MappedInput::unsupported() {
  std::string why = runner::tiling_unsupported();
  if (why.empty()) return {};
  return std::string(kSkipPrefix) + "no mapped memory on this GPU (" + why +
         "): an input past 2^31 or 2^32 elements is not built, so this test is not verified here";
}

MappedInput::MappedInput(std::size_t n, const std::function<float(std::size_t)>& period_at,
                         const std::vector<std::size_t>& own)
    : layout_(n, runner::tile_granularity(), period_at, own) {
  if (layout_.tiles().tiles() > static_cast<std::size_t>(runner::kMaxTiles))
    throw std::invalid_argument("MappedInput: more own tiles than reach the lab");
  range_ = std::make_unique<runner::TiledRange>(layout_.tiles());
  fill_tiles();
}

void MappedInput::fill_tiles() {
  const std::vector<float>& period = layout_.period_values();
  const std::size_t period_bytes = period.size() * sizeof(float);
  const std::size_t tile_bytes = layout_.tiles().tile_bytes;
  char* const repeated = range_->tile(0);
  REDUCE_CUDA_CHECK(cudaMemcpy(repeated, period.data(), period_bytes, cudaMemcpyHostToDevice));
  // The periods filled so far, copied after themselves: a few copies on the device fill the
  // tile, where the host would send all of it.
  for (std::size_t filled = period_bytes; filled < tile_bytes;) {
    const std::size_t bytes = std::min(filled, tile_bytes - filled);
    REDUCE_CUDA_CHECK(cudaMemcpy(repeated + filled, repeated, bytes, cudaMemcpyDeviceToDevice));
    filled += bytes;
  }
  for (std::size_t k = 1; k < layout_.tiles().tiles(); ++k)
    REDUCE_CUDA_CHECK(cudaMemcpy(range_->tile(k), repeated, tile_bytes, cudaMemcpyDeviceToDevice));
  // A lab's non-blocking stream does not wait for copies on the legacy stream.
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
}

MappedInput::~MappedInput() = default;

const float* MappedInput::data() const noexcept {
  return reinterpret_cast<const float*>(range_->data());
}

void MappedInput::set(std::size_t i, float value) {
  layout_.set(i, value);  // throws, before any write, for an index of the repeated tile
  REDUCE_CUDA_CHECK(
      cudaMemcpy(range_->data() + i * sizeof(float), &value, sizeof value, cudaMemcpyHostToDevice));
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace reduce::testing
