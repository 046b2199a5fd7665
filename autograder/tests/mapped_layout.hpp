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
#include <cstdint>
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

/// The input of the tests named after an index width, AboveInt32Range and AboveUint32Range: a
/// little past the first index that a 32-bit type cannot hold, 2^31 for a signed one (int),
/// 2^32 for an unsigned one too. Each operation writes the two tests' body once, for a width.
struct IndexWidth {
  std::size_t boundary;       ///< 2^31 or 2^32: the first index the 32-bit type cannot hold
  std::size_t n;              ///< the input's elements: a little past boundary, below 2 boundary
  const char* boundary_name;  ///< "2^31" or "2^32", for messages
  const char* n_name;         ///< n as messages spell it: "2^31 + 2^20 + 3"
  const char* index_type;     ///< the 32-bit index that wraps there: "int" or "unsigned int"
  const char* why;            ///< what goes wrong past the boundary, for messages
  std::uint64_t seed_number;  ///< the test's number for input_seed(): 0x31 or 0x32

  /// Whether n passes 2^32 too, where even an unsigned 32-bit index or count wraps.
  constexpr bool past_unsigned() const noexcept { return n > (std::size_t{1} << 32); }
};

/// AboveInt32Range's input: past 2^31, where a signed 32-bit index or count wraps.
inline constexpr IndexWidth kPastInt32 = {
    std::size_t{1} << 31,
    (std::size_t{1} << 31) + (std::size_t{1} << 20) + 3,
    "2^31",
    "2^31 + 2^20 + 3",
    "int",
    "past 2^31 a signed 32-bit index or count (int) wraps: use size_t",
    0x31};

/// AboveUint32Range's input: past 2^32, where a 32-bit index or count wraps, even an unsigned
/// one.
inline constexpr IndexWidth kPastUint32 = {
    std::size_t{1} << 32,
    (std::size_t{1} << 32) + (std::size_t{1} << 21) + 5,
    "2^32",
    "2^32 + 2^21 + 5",
    "unsigned int",
    "past 2^32 a 32-bit index or count wraps, even an unsigned one: use size_t",
    0x32};

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

  /// What a sum whose index wraps at \p boundary reads: element i mod boundary for every i < n,
  /// added as sum() adds.
  /// \throws std::invalid_argument for a boundary of 0
  double wrapped_sum(std::size_t boundary) const;

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
