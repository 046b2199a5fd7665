/// \file
/// \brief Inputs of more than 2^31 or 2^32 floats on any GPU: one tile of device memory mapped
/// again and again into one address range (runner::TiledRange), so that 8 or 16 GiB of input
/// need a few hundred MiB.
///
/// Every element is known on the host (at()), and sums over any range are found from one period
/// (sum()), so a test knows its exact answer without a host copy of the input. The lab reads the
/// input as it reads any other: through LabRunner, which gives it a range of its own with the
/// same tiles. The repeated tile is kMappedTileBytes (64 MiB, mapped_layout.hpp says why), so a
/// call over 2^32 floats reads it from the GPU's memory, or its L2 cache where that holds it: it
/// takes milliseconds on a lab that streams, seconds on one that adds atomically.
#pragma once

#include "gpu_test.hpp"
#include "mapped_layout.hpp"

#include <reduce_runner/tiled_range.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

/// Skips the current test, with the checker's skip prefix, when the GPU cannot map memory as a
/// MappedInput needs (the driver's virtual memory management): the test is then not verified on
/// this GPU. Needs no device memory to speak of.
#define REDUCE_REQUIRE_MAPPED_INPUT()                                                     \
  do {                                                                                    \
    const std::string reduce_unmappable_ = ::reduce::testing::MappedInput::unsupported(); \
    if (!reduce_unmappable_.empty()) GTEST_SKIP() << reduce_unmappable_;                  \
  } while (0)

namespace reduce::testing {

/// A device input of n floats in little physical memory. Element i holds period_at(i % period())
/// unless set() changed it, which it may only in one of the tiles of its own (those of the
/// indices given at construction). period() is the driver's granularity in floats (2^19 for its
/// usual 2 MiB), and each tile holds a whole number of periods (MappedLayout). Where the period
/// divides 2^31 (and so 2^32), an index that wraps there reads the same periodic value as the
/// right one, and only the elements set() changed tell them apart: each test checks on the host
/// that a wrapped index or a 32-bit count would get a wrong answer from its input.
class MappedInput {
 public:
  /// Empty when the GPU can hold a MappedInput; otherwise a skip message starting with
  /// kSkipPrefix that says why the test is not verified on this GPU.
  static std::string unsupported();

  /// \param n elements (the range holds ceil(n / tile elements) slots)
  /// \param period_at the value of element j of the period, for j < period()
  /// \param own indices (< n) whose tiles are their own, for set(): at most
  ///            runner::kMaxTiles - 1 tiles (7), and at least one slot left for the period
  /// \throws std::invalid_argument for n == 0, an index >= n or too many own tiles
  /// \throws std::runtime_error where the driver fails (tiled_range.hpp)
  MappedInput(std::size_t n, const std::function<float(std::size_t)>& period_at,
              const std::vector<std::size_t>& own);
  ~MappedInput();
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;

  /// The input's first element (device memory, valid while this lives).
  const float* data() const noexcept;
  /// Elements.
  std::size_t size() const noexcept { return layout_.size(); }
  /// Elements of one period, which repeats through the input but where set() changed it.
  std::size_t period() const noexcept { return layout_.period(); }

  /// Element \p i, as the device holds it.
  float at(std::size_t i) const { return layout_.at(i); }

  /// Writes \p value to element \p i on the device (landed when this returns) and on the host.
  /// \throws std::logic_error when \p i lies in the repeated tile: writing it would change
  ///         every period; name the index at construction instead
  void set(std::size_t i, float value);

  /// Sum of elements [begin, end), added in double: exact while every element is an integer
  /// and the sums stay below 2^53 (the course's exact integers).
  double sum(std::size_t begin, std::size_t end) const { return layout_.sum(begin, end); }

  /// Sum of the magnitudes of elements [begin, end), exact as sum() is: at most kExactBudget
  /// over [0, n) makes every partial sum, in any order, exact in float.
  double magnitude_sum(std::size_t begin, std::size_t end) const {
    return layout_.magnitude_sum(begin, end);
  }

  /// What a sum whose index wraps at \p boundary reads (MappedLayout::wrapped_sum()).
  double wrapped_sum(std::size_t boundary) const { return layout_.wrapped_sum(boundary); }

 private:
  /// Fills the repeated tile with copies of the period and each own tile with a copy of it.
  void fill_tiles();

  MappedLayout layout_;  // the tiles and every element's value, as the device holds them
  std::unique_ptr<runner::TiledRange> range_;
};

}  // namespace reduce::testing
