#include "mapped_input.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce_runner/protocol.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace reduce::testing {

std::string MappedInput::unsupported() {
  std::string why = runner::tiling_unsupported();
  if (why.empty()) return {};
  return std::string(kSkipPrefix) + "no mapped memory on this GPU (" + why +
         "): an input past 2^32 elements is not built, so this test is not verified here";
}

MappedInput::MappedInput(std::size_t n, const std::function<float(std::size_t)>& period_at,
                         const std::vector<std::size_t>& own)
    : n_(n) {
  if (n == 0) throw std::invalid_argument("MappedInput: no elements");
  const std::size_t tile_bytes = runner::tile_granularity();
  period_.resize(tile_bytes / sizeof(float));
  const std::size_t period = period_.size();
  for (std::size_t j = 0; j < period; ++j) period_[j] = period_at(j);
  for (bool magnitudes : {false, true}) {
    std::vector<double>& sums = period_prefix_[magnitudes ? 1 : 0];
    sums.assign(period + 1, 0.0);
    for (std::size_t j = 0; j < period; ++j)
      sums[j + 1] = sums[j] + (magnitudes ? std::fabs(period_[j]) : period_[j]);
  }
  runner::TileLayout layout;
  layout.tile_bytes = tile_bytes;
  layout.slots = (n + period - 1) / period;
  for (std::size_t i : own) {
    if (i >= n) throw std::invalid_argument("MappedInput: own index past the input's end");
    const std::size_t slot = i / period;
    if (layout.tile_at(slot) == 0) layout.own_slots.push_back(slot);
  }
  if (layout.tiles() > static_cast<std::size_t>(runner::kMaxTiles))
    throw std::invalid_argument("MappedInput: more own tiles than reach the lab");
  own_.assign(layout.own_slots.size(), period_);
  range_ = std::make_unique<runner::TiledRange>(layout);
  for (std::size_t k = 0; k < layout.tiles(); ++k) {
    const std::vector<float>& tile = k == 0 ? period_ : own_[k - 1];
    REDUCE_CUDA_CHECK(cudaMemcpy(range_->tile(k), tile.data(), tile_bytes, cudaMemcpyHostToDevice));
  }
  // A lab's non-blocking stream does not wait for copies on the legacy stream.
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
}

MappedInput::~MappedInput() = default;

const float* MappedInput::data() const noexcept {
  return reinterpret_cast<const float*>(range_->data());
}

float MappedInput::at(std::size_t i) const {
  if (i >= n_) throw std::out_of_range("MappedInput::at: index past the input's end");
  const std::size_t k = range_->layout().tile_at(i / period());
  return k == 0 ? period_[i % period()] : own_[k - 1][i % period()];
}

void MappedInput::set(std::size_t i, float value) {
  if (i >= n_) throw std::out_of_range("MappedInput::set: index past the input's end");
  const std::size_t k = range_->layout().tile_at(i / period());
  if (k == 0)
    throw std::logic_error("MappedInput::set: index " + std::to_string(i) +
                           " lies in the repeated tile; name it among the own indices");
  own_[k - 1][i % period()] = value;
  REDUCE_CUDA_CHECK(
      cudaMemcpy(range_->data() + i * sizeof(float), &value, sizeof value, cudaMemcpyHostToDevice));
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
}

double MappedInput::prefix(std::size_t end, bool magnitudes) const {
  const std::size_t period = this->period();
  const std::vector<double>& sums = period_prefix_[magnitudes ? 1 : 0];
  // As if every slot held the repeated tile, then each own tile's difference from it.
  double total = static_cast<double>(end / period) * sums[period] + sums[end % period];
  const runner::TileLayout& layout = range_->layout();
  for (std::size_t k = 1; k < layout.tiles(); ++k) {
    const std::size_t start = layout.own_slots[k - 1] * period;
    if (start >= end) continue;
    const std::size_t count = std::min(end - start, period);
    for (std::size_t j = 0; j < count; ++j) {
      const float own = own_[k - 1][j];
      total += magnitudes ? std::fabs(static_cast<double>(own)) - std::fabs(period_[j])
                          : static_cast<double>(own) - period_[j];
    }
  }
  return total;
}

double MappedInput::sum(std::size_t begin, std::size_t end) const {
  if (begin > end || end > n_) throw std::out_of_range("MappedInput::sum: not a range of it");
  return prefix(end, false) - prefix(begin, false);
}

double MappedInput::magnitude_sum(std::size_t begin, std::size_t end) const {
  if (begin > end || end > n_)
    throw std::out_of_range("MappedInput::magnitude_sum: not a range of it");
  return prefix(end, true) - prefix(begin, true);
}

}  // namespace reduce::testing
