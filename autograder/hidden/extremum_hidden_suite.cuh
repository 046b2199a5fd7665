/// \file
/// \brief Hidden tests of the maximum and minimum contracts, written once: maximum_hidden_test.cu
/// and minimum_hidden_test.cu define REDUCE_EXTREMUM_MAXIMUM or REDUCE_EXTREMUM_MINIMUM and
/// include this file. As in the public suite (extremum_suite.cuh), inputs and expected values
/// are written for the maximum and passed through mirror() for the minimum.
///
/// What the public suite leaves to chance: prime and 3 x 2^k +- 1 sizes with the largest element
/// in the tail (where a grid-stride loop's remainder lives, beyond the unrolled part), windows
/// of one allocation whose neighbours are larger than anything inside (a read of one float too
/// many, before or after, shows), NaN and signed zeros in the head and tail of inputs that start
/// 1-3 floats past a 16-byte boundary, and a largest element that moves to places drawn from the
/// seed and changes its value while the buffer's ends stay the same (caches keyed on the pointer,
/// n or the ends return a stale answer). Every expected value is exact: the maximum rounds
/// nothing.
#pragma once

#include "extremum.cuh"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

/// Every hidden test: a GPU, and the maximum (or the minimum) through the contract runner. Each
/// operation's suites have names of their own, so that both link into one checker.
class REDUCE_EXTREMUM_PICK(HiddenMaximum, HiddenMinimum) : public FloatLabTest {
 protected:
  REDUCE_EXTREMUM_PICK(HiddenMaximum, HiddenMinimum)() : FloatLabTest(Traits::lab()) {}
};

/// The fixture under one name, for the parameterised suite to derive from.
using HiddenExtremum = REDUCE_EXTREMUM_PICK(HiddenMaximum, HiddenMinimum);

// ---- prime and 3 x 2^k +- 1 sizes, the largest element in the tail ----------------------------

class REDUCE_EXTREMUM_PICK(HiddenMaximumSizes, HiddenMinimumSizes)
    : public HiddenExtremum, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(HiddenMaximumSizes, HiddenMinimumSizes), LargestInTheTail) {
  const std::size_t n = GetParam();
  // mirror(all_negative(n, seed)), written on the GPU.
  const std::uint64_t seed = input_seed(11 * n);
  const auto value_at = [seed](std::size_t i) { return mirror(all_negative_at(seed, i)); };
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = value_at(i);
  // The last element, and one drawn from the seed among the last 4096: past every whole tile of
  // the grid-stride loop, where the remainder is handled (an `if` instead of a `for` there keeps
  // one element per thread and drops the rest).
  const std::size_t drawn = n - 1 - mix(input_seed(), n) % std::min<std::size_t>(n, 4096);
  std::vector<Change> changes;
  for (std::size_t p : {n - 1, drawn}) {
    changes.push_back({p, mirror(1.0f)});
    changes.push_back({p, kNaN});
  }
  const std::vector<float> got = run_variants(host, changes);
  for (std::size_t k = 0; k < changes.size(); ++k) {
    SCOPED_TRACE(std::string(Traits::kLargest) + " element at index " +
                 std::to_string(changes[k].at) + " of " + std::to_string(n));
    expect_result(got[k], changes[k].value, n);
  }
  expect_result(run(host), Traits::streamed(n, value_at), n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(HiddenMaximumSizes, HiddenMinimumSizes),
                            ::testing::Values<std::size_t>(3, 7, 127, 3071, 3073, 8191, 65521,
                                                           131071, 196607, 196609, 999983, 3145727,
                                                           3145729, 16777213),
                            ::testing::PrintToStringParamName());

// ---- windows of one allocation: nothing outside may be read ----------------------------------

TEST_F(REDUCE_EXTREMUM_PICK(HiddenMaximum, HiddenMinimum), WindowsOfOneAllocation) {
  // Strictly monotonic, all negative, exact: the largest element of a window is its last
  // (rising) or its first (falling), and the float just after (rising) or just before (falling)
  // the window is larger still, so reading one float too many changes the result.
  for (const bool rising : {true, false}) {
    const std::vector<float> values =
        mirror(rising ? rising_negatives(kWindowSpan) : falling_negatives(kWindowSpan));
    DeviceBuffer<float> in(values);
    SCOPED_TRACE(std::string(rising ? "rising" : "falling") + " values: a " + Traits::kLarger +
                 " result was read from outside the window");
    for_each_window(values, in, std::nullopt, [&](const Window& w) {
      expect_result(run(w.device, w.n), Traits::reference(w.host), w.n);
    });
  }
}

// ---- NaN and signed zeros in the head and tail of misaligned inputs --------------------------

TEST_F(REDUCE_EXTREMUM_PICK(HiddenMaximum, HiddenMinimum), HeadAndTailOfMisalignedInputs) {
  const float loser = mirror(-0.0f), winner = mirror(0.0f);
  for (std::size_t n : {std::size_t{4099}, (std::size_t{1} << 20) + 3}) {
    const std::vector<float> negatives = mirror(all_negative(n + 4, input_seed(n + 0x4EAD)));
    const std::vector<float> zeros(n + 4, loser);
    for (std::size_t offset = 1; offset < 4; ++offset) {
      // Before the first 16-byte boundary and after the last whole float4: the scalar head and
      // tail of a vectorised loop, which must follow the same IEEE rules as its body.
      std::vector<Change> nans, winners;
      for (std::size_t p : {std::size_t{0}, std::size_t{1}, std::size_t{2}, n - 3, n - 2, n - 1}) {
        nans.push_back({offset + p, from_bits(0xFFC00000u)});
        winners.push_back({offset + p, winner});
      }
      const std::vector<float> got_nan = run_variants(negatives, nans, offset, n);
      const std::vector<float> got_winner = run_variants(zeros, winners, offset, n);
      for (std::size_t k = 0; k < nans.size(); ++k) {
        SCOPED_TRACE("input at a float offset of " + std::to_string(offset) + ", n = " +
                     std::to_string(n) + ", index " + std::to_string(nans[k].at - offset));
        expect_result(got_nan[k], kNaN, n);
        SCOPED_TRACE("one " + spell(winner) + " among " + spell(loser));
        expect_result(got_winner[k], winner, n);
      }
    }
  }
}

// ---- a largest element that moves and changes while the ends stay the same -------------------

TEST_F(REDUCE_EXTREMUM_PICK(HiddenMaximum, HiddenMinimum), MovingLargestWithNewValues) {
  const std::size_t n = 3 * (std::size_t{1} << 22) + 1;
  const std::uint64_t seed = input_seed(0x3A0);
  DeviceBuffer<float> in = all_negative_on_device(n, seed, Traits::kMirrored);
  std::size_t previous = 0;
  for (int k = 0; k < 24; ++k) {
    // 1..24 in a scrambled order: neither the last answer nor the largest so far is right.
    const float value = mirror(static_cast<float>(1 + (7 * k) % 24));
    const std::size_t p = 64 + mix(input_seed(0x3A1), k) % (n - 128);
    if (k > 0) set_element(in.data(), previous, mirror(all_negative_at(seed, previous)));
    set_element(in.data(), p, value);
    SCOPED_TRACE("round " + std::to_string(k) + ": " + spell(value) + " at index " +
                 std::to_string(p) + " (drawn from REDUCE_SEED=" + std::to_string(test_seed()) +
                 "), the same pointer, n and first and last 64 elements as every other round");
    expect_result(run(in.data(), n), value, n);
    previous = p;
  }
}

}  // namespace
}  // namespace reduce::testing
