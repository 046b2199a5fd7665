#include "mapped_layout.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace reduce::testing {

std::size_t mapped_tile_bytes(std::size_t granularity) {
  if (granularity == 0 || granularity >= kMappedTileBytes) return granularity;
  return kMappedTileBytes / granularity * granularity;
}

MappedLayout::MappedLayout(std::size_t n, std::size_t granularity,
                           const std::function<float(std::size_t)>& period_at,
                           const std::vector<std::size_t>& own)
    : n_(n) {
  if (n == 0) throw std::invalid_argument("MappedInput: no elements");
  if (granularity == 0 || granularity % sizeof(float) != 0)
    throw std::invalid_argument("MappedInput: a granularity of " + std::to_string(granularity) +
                                " bytes holds no whole number of floats");
  period_.resize(granularity / sizeof(float));
  const std::size_t period = period_.size();
  for (std::size_t j = 0; j < period; ++j) period_[j] = period_at(j);
  for (bool magnitudes : {false, true}) {
    std::vector<double>& sums = period_prefix_[magnitudes ? 1 : 0];
    sums.assign(period + 1, 0.0);
    for (std::size_t j = 0; j < period; ++j)
      sums[j + 1] = sums[j] + (magnitudes ? std::fabs(period_[j]) : period_[j]);
  }
  // A whole number of periods per tile: every slot, the own ones too, starts a period.
  layout_.tile_bytes = mapped_tile_bytes(granularity);
  const std::size_t tile = tile_elements();
  layout_.slots = (n + tile - 1) / tile;
  for (std::size_t i : own) {
    if (i >= n) throw std::invalid_argument("MappedInput: own index past the input's end");
    const std::size_t slot = i / tile;
    if (layout_.tile_at(slot) == 0) layout_.own_slots.push_back(slot);
  }
  if (layout_.own_slots.size() >= layout_.slots)
    throw std::invalid_argument("MappedInput: own tiles fill every slot of " + std::to_string(n) +
                                " elements");
}

float MappedLayout::at(std::size_t i) const {
  if (i >= n_) throw std::out_of_range("MappedInput::at: index past the input's end");
  if (layout_.tile_at(i / tile_elements()) != 0) {
    const auto written = written_.find(i);
    if (written != written_.end()) return written->second;
  }
  return period_[i % period()];
}

void MappedLayout::set(std::size_t i, float value) {
  if (i >= n_) throw std::out_of_range("MappedInput::set: index past the input's end");
  if (layout_.tile_at(i / tile_elements()) == 0)
    throw std::logic_error("MappedInput::set: index " + std::to_string(i) +
                           " lies in the repeated tile; name it among the own indices");
  written_[i] = value;
}

double MappedLayout::prefix(std::size_t end, bool magnitudes) const {
  const std::size_t period = this->period();
  const std::vector<double>& sums = period_prefix_[magnitudes ? 1 : 0];
  // As if every element held its periodic value, then each written element's difference.
  double total = static_cast<double>(end / period) * sums[period] + sums[end % period];
  for (const auto& [i, value] : written_) {
    if (i >= end) break;
    const float periodic = period_[i % period];
    total += magnitudes ? std::fabs(static_cast<double>(value)) - std::fabs(periodic)
                        : static_cast<double>(value) - periodic;
  }
  return total;
}

double MappedLayout::sum(std::size_t begin, std::size_t end) const {
  if (begin > end || end > n_) throw std::out_of_range("MappedInput::sum: not a range of it");
  return prefix(end, false) - prefix(begin, false);
}

double MappedLayout::magnitude_sum(std::size_t begin, std::size_t end) const {
  if (begin > end || end > n_)
    throw std::out_of_range("MappedInput::magnitude_sum: not a range of it");
  return prefix(end, true) - prefix(begin, true);
}

double MappedLayout::wrapped_sum(std::size_t boundary) const {
  if (boundary == 0) throw std::invalid_argument("MappedInput::wrapped_sum: a boundary of 0");
  if (boundary >= n_) return sum(0, n_);
  // n / boundary whole rounds of [0, boundary), then the first n mod boundary elements again.
  return static_cast<double>(n_ / boundary) * sum(0, boundary) + sum(0, n_ % boundary);
}

}  // namespace reduce::testing
