/// \file
/// \brief Where a MappedInput's elements lie and what they hold, worked out on the host: the
/// tiles' layout (runner::TileLayout) and every element's value, without a GPU, so that the
/// arithmetic is tested on any machine (cpu/mapped_layout_test.cpp).
///
/// The input repeats one period of the driver's granularity (2^19 floats for its usual 2 MiB).
/// A tile holds a whole number of periods, kMappedTileBytes in all, so every slot starts a new
/// period and the range needs one mapping per tile, not one per period: an input of 2^32 + 2^21 +
/// 5 floats takes 257 mappings instead of 8,197, in the checker and again in the lab's process,
/// where the driver serialises the mappings of every process on the GPU.
#pragma once

#include <reduce_runner/tiled_range.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <vector>

namespace reduce::testing {

/// The size a MappedInput's tiles aim at. Its memory: (1 + own tiles) tiles in the checker and
/// as many in the lab's process, and during a call as many again in the checker (the copies the
/// lab's process fills its range from, protocol.hpp's TiledRef). The sum's AboveUint32Range has 4
/// own tiles: 320 MiB in each process, 640 MiB at most in the checker; the most tiles that reach
/// the lab, 8, make 512 MiB and 1 GiB. Up to 8 checkers share one GPU, some of them 15 GB ones.
inline constexpr std::size_t kMappedTileBytes = std::size_t{64} << 20;

/// A MappedInput's tile size for the driver's \p granularity: the largest multiple of it up to
/// kMappedTileBytes, and at least one granularity.
std::size_t mapped_tile_bytes(std::size_t granularity);

/// A MappedInput's layout and values. Element i holds period_at(i % period()) unless set()
/// changed it; set() may change only elements in tiles of their own (those of the indices given
/// at construction), which start as copies of the repeated tile.
class MappedLayout {
 public:
  /// \param n elements (the range holds ceil(n / tile elements) slots)
  /// \param granularity the driver's granularity in bytes (runner::tile_granularity()): one
  ///        period's bytes
  /// \param period_at the value of element j of the period, for j < period()
  /// \param own indices (< n) whose tiles are their own, for set()
  /// \throws std::invalid_argument for n == 0, a granularity that is no whole number of floats,
  ///         an index >= n, or own tiles that leave no slot for the repeated one
  MappedLayout(std::size_t n, std::size_t granularity,
               const std::function<float(std::size_t)>& period_at,
               const std::vector<std::size_t>& own);

  /// The tiles' layout: tile_bytes, slots (one mapping each) and the own tiles' slots.
  const runner::TileLayout& tiles() const noexcept { return layout_; }
  /// Elements.
  std::size_t size() const noexcept { return n_; }
  /// Elements of one period.
  std::size_t period() const noexcept { return period_.size(); }
  /// Elements of one tile: a whole number of periods.
  std::size_t tile_elements() const noexcept { return layout_.tile_bytes / sizeof(float); }
  /// The period's values, which fill every tile before set().
  const std::vector<float>& period_values() const noexcept { return period_; }

  /// Element \p i.
  /// \throws std::out_of_range for i >= size()
  float at(std::size_t i) const;

  /// Records \p value as element \p i.
  /// \throws std::out_of_range for i >= size()
  /// \throws std::logic_error when \p i lies in the repeated tile: writing it would change
  ///         every period; name the index at construction instead
  void set(std::size_t i, float value);

  /// Sum of elements [begin, end), added in double: exact while every element is an integer
  /// and the sums stay below 2^53 (the course's exact integers).
  double sum(std::size_t begin, std::size_t end) const;

  /// Sum of the magnitudes of elements [begin, end), exact as sum() is.
  double magnitude_sum(std::size_t begin, std::size_t end) const;

 private:
  /// Sum of f(element) over [0, end) for f = identity (\p magnitudes false) or fabs.
  double prefix(std::size_t end, bool magnitudes) const;

  std::size_t n_;
  runner::TileLayout layout_;
  std::vector<float> period_;             // the repeated period
  std::vector<double> period_prefix_[2];  // sums of the period's first j elements, and of |.|
  std::map<std::size_t, float> written_;  // the elements set() changed, by index
};

}  // namespace reduce::testing
