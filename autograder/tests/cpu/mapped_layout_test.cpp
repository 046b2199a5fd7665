// The layout of the inputs past 2^31 and 2^32 elements (mapped_layout.hpp): which slot each
// sentinel of the AboveInt32Range and AboveUint32Range tests lands in, how many mappings the
// range costs, that every element holds the periodic value the tests count on, and what an index
// that wraps at the boundary reads. These need no GPU: they run everywhere.
#include "mapped_layout.hpp"

#include <reduce/generators.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace reduce::testing {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGranularity = 2 * kMiB;  // the driver's, on every GPU seen so far
constexpr std::size_t kPeriod = kGranularity / sizeof(float);
constexpr std::size_t kTwo31 = std::size_t{1} << 31, kTwo32 = std::size_t{1} << 32;
constexpr std::size_t kN = kTwo32 + (1u << 21) + 5;  // the tests' n

TEST(MappedTileBytes, AreWholeGranularitiesUpTo64MiB) {
  EXPECT_EQ(mapped_tile_bytes(kGranularity), 64 * kMiB);
  EXPECT_EQ(mapped_tile_bytes(3 * kMiB), 63 * kMiB);
  EXPECT_EQ(mapped_tile_bytes(4096), 64 * kMiB);
  EXPECT_EQ(mapped_tile_bytes(64 * kMiB), 64 * kMiB);
  EXPECT_EQ(mapped_tile_bytes(128 * kMiB), 128 * kMiB);
}

/// Indices of every kind: the ends of periods and slots, both sides of 2^31 and 2^32, inside
/// and around the own tiles, the end, and a sweep through the whole range at an odd stride.
std::vector<std::size_t> index_classes(std::size_t n, std::size_t tile) {
  std::vector<std::size_t> at = {0,        1,          kPeriod - 1,   kPeriod,      kPeriod + 1,
                                 tile - 1, tile,       tile + 1,      3 * tile + 7, kTwo31 - tile,
                                 kTwo31,   kTwo31 + 1, kTwo31 - 2,    kTwo32 - 2,   kTwo32 - 1,
                                 kTwo32,   kTwo32 + 1, kTwo32 + 1000, n - 2,        n - 1};
  for (std::size_t i = 12345; i < n; i += 1000003) at.push_back(i);
  return at;
}

/// The sum's input of \p n elements from \p seed (the period of exact_integers(n, seed)'s
/// start), with tiles of their own for the indices of \p sentinels, not yet written.
template <std::size_t kCount>
MappedLayout sum_layout(std::size_t n, std::uint64_t seed,
                        const std::pair<std::size_t, float> (&sentinels)[kCount]) {
  std::vector<std::size_t> own;
  for (const auto& [at, value] : sentinels) own.push_back(at);
  return MappedLayout(
      n, kGranularity, [n, seed](std::size_t j) { return exact_integer_at(n, seed, j); }, own);
}

// ---- the sum's (and the mean's) AboveUint32Range ---------------------------------------------

class SumAboveUint32Range : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  std::uint64_t seed() const { return GetParam(); }
  float periodic(std::size_t i) const { return exact_integer_at(kN, seed(), i % kPeriod); }
  MappedLayout layout() const { return sum_layout(kN, seed(), kSentinels); }
  static constexpr std::pair<std::size_t, float> kSentinels[] = {
      {kTwo31 - 1, 2.0f}, {kTwo31, 3.0f}, {kTwo32 - 1, 5.0f}, {kTwo32, 7.0f}, {kN - 1, 11.0f}};
};

TEST_P(SumAboveUint32Range, SentinelsLandInTilesOfTheirOwn) {
  const MappedLayout in = layout();
  const runner::TileLayout& tiles = in.tiles();
  EXPECT_EQ(tiles.tile_bytes, 64 * kMiB);
  EXPECT_EQ(in.tile_elements(), std::size_t{1} << 24);
  EXPECT_EQ(in.tile_elements() % in.period(), 0u);
  // 2^31 - 1 and 2^31 sit on either side of a slot's edge, as 2^32 - 1 and 2^32 do; the end
  // shares 2^32's slot.
  EXPECT_EQ(tiles.own_slots, (std::vector<std::size_t>{127, 128, 255, 256}));
  const std::size_t expected_tile[] = {1, 2, 3, 4, 4};
  for (std::size_t k = 0; k < 5; ++k)
    EXPECT_EQ(tiles.tile_at(kSentinels[k].first / in.tile_elements()), expected_tile[k])
        << "sentinel at " << kSentinels[k].first;
  EXPECT_EQ(tiles.tiles(), 5u);
  EXPECT_LE(tiles.tiles() * tiles.tile_bytes, 1024 * kMiB) << "physical tiles of one process";
}

TEST_P(SumAboveUint32Range, MapsOneSlotPer64MiB) {
  // One cuMemMap per slot, in the checker and again in the lab's process: 257, where tiles of
  // the granularity took ceil(n / 2^19) = 8197.
  EXPECT_EQ(layout().tiles().slots, 257u);
  EXPECT_EQ(layout().tiles().bytes(), 257 * 64 * kMiB);
}

TEST_P(SumAboveUint32Range, EveryElementHoldsItsPeriodicValue) {
  const MappedLayout in = layout();
  ASSERT_EQ(in.period(), kPeriod);
  for (std::size_t j = 0; j < kPeriod; ++j)
    ASSERT_EQ(in.period_values()[j], exact_integer_at(kN, seed(), j)) << "period element " << j;
  for (const std::size_t i : index_classes(kN, in.tile_elements()))
    ASSERT_EQ(in.at(i), periodic(i)) << "element " << i;
  // Each slot starts with the period's start, own slots too.
  for (std::size_t slot = 0; slot < in.tiles().slots; ++slot)
    for (const std::size_t j : {std::size_t{0}, std::size_t{1}, kPeriod - 1})
      ASSERT_EQ(in.at(slot * in.tile_elements() + j), exact_integer_at(kN, seed(), j))
          << "slot " << slot << ", element " << j;
}

TEST_P(SumAboveUint32Range, SetChangesOnlyItsOwnElement) {
  MappedLayout in = layout();
  for (const auto& [at, value] : kSentinels) in.set(at, value);
  const std::map<std::size_t, float> written(std::begin(kSentinels), std::end(kSentinels));
  for (const auto& [at, value] : kSentinels) {
    EXPECT_EQ(in.at(at), value) << "sentinel at " << at;
    const auto before = written.find(at - 1);
    EXPECT_EQ(in.at(at - 1), before != written.end() ? before->second : periodic(at - 1))
        << "before the sentinel at " << at;
  }
  EXPECT_EQ(in.at(kTwo32 + 1), periodic(kTwo32 + 1));
  EXPECT_THROW(in.set(0, 1.0f), std::logic_error) << "slot 0 is the repeated tile's";
  EXPECT_THROW(in.set(kTwo31 - in.tile_elements() - 1, 1.0f), std::logic_error);
  EXPECT_THROW(in.set(kN, 1.0f), std::out_of_range);
  EXPECT_THROW(static_cast<void>(in.at(kN)), std::out_of_range);
}

TEST_P(SumAboveUint32Range, SumsAgreeWithTheElements) {
  MappedLayout in = layout();
  for (const auto& [at, value] : kSentinels) in.set(at, value);
  double one_period = 0.0;
  for (std::size_t j = 0; j < kPeriod; ++j) one_period += in.at(j);
  EXPECT_EQ(in.sum(0, kPeriod), one_period);
  EXPECT_EQ(in.sum(5 * kPeriod, 5 * kPeriod + 3 * in.tile_elements()),
            one_period * 3.0 * static_cast<double>(in.tile_elements() / kPeriod));
  for (const auto& [at, value] : kSentinels) {
    const std::size_t begin = at - 3000, end = std::min(at + 3000, kN);
    double window = 0.0, magnitudes = 0.0;
    for (std::size_t i = begin; i < end; ++i) {
      window += in.at(i);
      magnitudes += in.at(i) < 0 ? -in.at(i) : in.at(i);
    }
    EXPECT_EQ(in.sum(begin, end), window) << "around " << at;
    EXPECT_EQ(in.magnitude_sum(begin, end), magnitudes) << "around " << at;
  }
}

TEST_P(SumAboveUint32Range, ThirtyTwoBitsGetAnotherAnswer) {
  MappedLayout in = layout();
  for (const auto& [at, value] : kSentinels) in.set(at, value);
  const double want = in.sum(0, kN);
  EXPECT_LE(in.magnitude_sum(0, kN), kExactBudget);
  // What the test asserts: a wrapped index reads elements 0 and 2^21 + 4 instead of the
  // sentinels 7 and 11 past 2^32 (the period divides 2^32); a 32-bit count sums 2^21 + 5.
  const double wrapped = in.sum(0, kTwo32) + in.sum(0, kN - kTwo32);
  const double counted = in.sum(0, kN - kTwo32);
  EXPECT_EQ(want - wrapped, 18.0 - exact_integer_at(kN, seed(), 0) -
                                exact_integer_at(kN, seed(), (kN - 1 - kTwo32) % kPeriod));
  EXPECT_NE(wrapped, want);
  EXPECT_GE(want - counted, 28.0) << "the sentinels past 2^21 + 5, and no element is negative";
}

INSTANTIATE_TEST_SUITE_P(Seeds, SumAboveUint32Range,
                         ::testing::Values(std::uint64_t{0x32}, std::uint64_t{7},
                                           std::uint64_t{0x9E3779B97F4A7C15}));

// ---- the sum's (and the mean's) AboveInt32Range: past 2^31, below 2^32 -------------------------

constexpr std::size_t kN31 = kPastInt32.n;  // 2^31 + 2^20 + 3

class SumAboveInt32Range : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  std::uint64_t seed() const { return GetParam(); }
  float periodic(std::size_t i) const { return exact_integer_at(kN31, seed(), i % kPeriod); }
  MappedLayout layout() const {  // with the sentinels written
    MappedLayout in = sum_layout(kN31, seed(), kSentinels);
    for (const auto& [at, value] : kSentinels) in.set(at, value);
    return in;
  }
  static constexpr std::pair<std::size_t, float> kSentinels[] = {
      {kTwo31 - 1, 2.0f}, {kTwo31, 3.0f}, {kN31 - 1, 11.0f}};
};

TEST_P(SumAboveInt32Range, SentinelsLandInTilesOfTheirOwn) {
  const MappedLayout in = layout();
  const runner::TileLayout& tiles = in.tiles();
  EXPECT_EQ(kPastInt32.boundary, kTwo31);
  EXPECT_EQ(kPastUint32.boundary, kTwo32);
  EXPECT_EQ(kPastUint32.n, kN);
  EXPECT_FALSE(kPastInt32.past_unsigned());
  EXPECT_TRUE(kPastUint32.past_unsigned());
  // 2^31 - 1 and 2^31 on either side of a slot's edge, each in a tile of its own; the end
  // shares 2^31's slot; 129 slots, one mapping each.
  EXPECT_EQ(tiles.slots, 129u);
  EXPECT_EQ(tiles.own_slots, (std::vector<std::size_t>{127, 128}));
  const std::size_t expected_tile[] = {1, 2, 2};
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_EQ(tiles.tile_at(kSentinels[k].first / in.tile_elements()), expected_tile[k])
        << "sentinel at " << kSentinels[k].first;
  EXPECT_EQ(tiles.tiles(), 3u);
  EXPECT_EQ(tiles.tiles() * tiles.tile_bytes, 192 * kMiB) << "physical tiles of one process";
}

TEST_P(SumAboveInt32Range, EveryOtherElementHoldsItsPeriodicValue) {
  const MappedLayout in = layout();
  for (const std::size_t i : index_classes(kN31, in.tile_elements())) {
    if (i >= kN31) continue;
    const bool sentinel = i == kTwo31 - 1 || i == kTwo31 || i == kN31 - 1;
    if (!sentinel) ASSERT_EQ(in.at(i), periodic(i)) << "element " << i;
  }
  for (const auto& [at, value] : kSentinels) EXPECT_EQ(in.at(at), value) << "sentinel at " << at;
  EXPECT_THROW(static_cast<void>(in.at(kN31)), std::out_of_range);
}

TEST_P(SumAboveInt32Range, SignedThirtyTwoBitsGetAnotherAnswer) {
  const MappedLayout in = layout();
  const double want = in.sum(0, kN31);
  EXPECT_LE(in.magnitude_sum(0, kN31), kExactBudget);
  // What the test asserts: an index that wraps at 2^31 reads elements 0 and 2^20 + 2 instead of
  // the sentinels 3 and 11 at 2^31 and n - 1 (the period divides 2^31); a count cut to n mod 2^31
  // sums 2^20 + 3 elements.
  const double wrapped = in.wrapped_sum(kTwo31), counted = in.sum(0, kN31 % kTwo31);
  EXPECT_EQ(wrapped, in.sum(0, kTwo31) + in.sum(0, kN31 - kTwo31));
  EXPECT_EQ(want - wrapped, 14.0 - exact_integer_at(kN31, seed(), 0) -
                                exact_integer_at(kN31, seed(), (kN31 - 1 - kTwo31) % kPeriod));
  EXPECT_NE(wrapped, want);
  EXPECT_GE(want - counted, 16.0) << "the sentinels past 2^20 + 3, and no element is negative";
  EXPECT_EQ(in.wrapped_sum(kTwo32), want) << "no index below n wraps at 2^32";
}

INSTANTIATE_TEST_SUITE_P(Seeds, SumAboveInt32Range,
                         ::testing::Values(std::uint64_t{0x31}, std::uint64_t{7},
                                           std::uint64_t{0x9E3779B97F4A7C15}));

// ---- every operation's own tiles, at both widths, reach the lab --------------------------------

/// The own indices of each test named after a width (sum_test.cu, mean_test.cu, product_test.cu,
/// argmax_test.cu, extremum_suite.cuh), and the own slots they take.
struct OwnTiles {
  const char* test;                ///< the operation and width
  IndexWidth width;                ///< the input
  std::vector<std::size_t> own;    ///< its own indices
  std::vector<std::size_t> slots;  ///< the slots of their tiles
};

TEST(IndexWidthTests, OwnTilesAreFewEnoughForTheLab) {
  const std::size_t a = kTwo31, b = kTwo32, n31 = kPastInt32.n, n32 = kPastUint32.n;
  const OwnTiles cases[] = {
      {"sum 2^31", kPastInt32, {a - 1, a, n31 - 1}, {127, 128}},
      {"sum 2^32", kPastUint32, {a - 1, a, b - 1, b, n32 - 1}, {127, 128, 255, 256}},
      {"mean 2^31", kPastInt32, {0, a - 1, a, a + 9, n31 - 1}, {0, 127, 128}},
      {"mean 2^32", kPastUint32, {0, a - 1, a, a + 9, b - 1, b, n32 - 1}, {0, 127, 128, 255, 256}},
      {"product 2^31", kPastInt32, {a - 1, a, a + 5, n31 - 1}, {127, 128}},
      {"product 2^32", kPastUint32, {a - 1, a, a + 5, b - 1, b, n32 - 1}, {127, 128, 255, 256}},
      {"argmax 2^31", kPastInt32, {a, a + 3, a + 7, n31 - 1}, {128}},
      {"argmax 2^32", kPastUint32, {a, b + 3, b + 7, n32 - 1}, {128, 256}},
      {"extremum 2^31", kPastInt32, {a, a + 7, a + 1000, n31 - 1}, {128}},
      {"extremum 2^32", kPastUint32, {a, b + 7, b + 1000, n32 - 1}, {128, 256}}};
  const auto zero = [](std::size_t) { return 0.0f; };
  for (const OwnTiles& c : cases) {
    SCOPED_TRACE(c.test);
    MappedLayout in(c.width.n, kGranularity, zero, c.own);
    EXPECT_EQ(in.tiles().own_slots, c.slots);
    EXPECT_LE(in.tiles().tiles(), 8u) << "runner::kMaxTiles";
    for (const std::size_t i : c.own) EXPECT_NO_THROW(in.set(i, 1.0f)) << "index " << i;
    EXPECT_GT(c.width.n, c.width.boundary);
    EXPECT_LT(c.width.n, 2 * c.width.boundary) << "one round past the boundary";
  }
}

// ---- wrapped_sum() against the elements ---------------------------------------------------------

TEST(MappedLayoutWrappedSum, IsTheSumOfElementIModBoundary) {
  const std::size_t granularity = 3 * kMiB, period = granularity / sizeof(float);
  const std::size_t tile = mapped_tile_bytes(granularity) / sizeof(float);
  const std::size_t n = 2 * tile + 5;
  const auto pattern = [](std::size_t j) { return static_cast<float>(j % 13) - 4.0f; };
  MappedLayout in(n, granularity, pattern, {5, n - 1});
  in.set(5, 100.0f);
  in.set(n - 1, 3000.0f);
  // Boundaries that divide neither the period nor a tile, past n, and below n / 2 (n / boundary
  // whole rounds): each element j < boundary is read n / boundary times, once more below
  // n mod boundary.
  for (const std::size_t boundary : {period + 1, tile + 3, n - 1, n + 1, (n - 7) / 3}) {
    double expected = 0.0;
    for (std::size_t j = 0; j < std::min(boundary, n); ++j)
      expected += in.at(j) * static_cast<double>(n / boundary + (j < n % boundary ? 1 : 0));
    EXPECT_EQ(in.wrapped_sum(boundary), expected) << "boundary " << boundary;
  }
  EXPECT_EQ(in.wrapped_sum(n), in.sum(0, n));
  EXPECT_THROW(static_cast<void>(in.wrapped_sum(0)), std::invalid_argument);
}

// ---- the argmax's, minimum's and maximum's: a pattern of its own, fewer own tiles ------------

TEST(ArgmaxAboveUint32Range, LayoutAndPattern) {
  const auto pattern = [](std::size_t j) { return -1.0f - static_cast<float>(j % 1000); };
  MappedLayout in(kN, kGranularity, pattern, {kTwo31, kTwo32 + 3, kTwo32 + 7, kN - 1});
  EXPECT_EQ(in.tiles().own_slots, (std::vector<std::size_t>{128, 256}));
  EXPECT_EQ(in.tiles().slots, 257u);
  for (const std::size_t i : index_classes(kN, in.tile_elements()))
    ASSERT_EQ(in.at(i), pattern(i % kPeriod)) << "element " << i;
  in.set(kTwo32 + 7, 5.0f);
  EXPECT_EQ(in.at(kTwo32 + 7), 5.0f);
  EXPECT_EQ(in.at(kTwo32 + 7 - kTwo32), pattern(7)) << "what a wrapped index reads";
  EXPECT_THROW(in.set(kTwo31 - 1, 0.0f), std::logic_error)
      << "2^31 - 1 lies in slot 127, the repeated tile's";
}

// ---- a granularity that does not divide 64 MiB --------------------------------------------------

TEST(MappedLayoutOddGranularity, TilesHoldWholePeriods) {
  const std::size_t granularity = 3 * kMiB, period = granularity / sizeof(float);
  const std::size_t tile = mapped_tile_bytes(granularity) / sizeof(float);  // 21 periods
  const std::size_t n = 5 * tile + 17;
  const auto pattern = [](std::size_t j) { return static_cast<float>(j % 7919); };
  const MappedLayout in(n, granularity, pattern, {2 * tile + 5});
  EXPECT_EQ(in.tile_elements(), tile);
  EXPECT_EQ(in.tiles().slots, 6u);
  EXPECT_EQ(in.tiles().own_slots, (std::vector<std::size_t>{2}));
  for (std::size_t i = 0; i < n; i += 4099) ASSERT_EQ(in.at(i), pattern(i % period)) << i;
  EXPECT_EQ(in.at(n - 1), pattern((n - 1) % period));
}

TEST(MappedLayoutErrors, RefusesWhatCannotBeMapped) {
  const auto zero = [](std::size_t) { return 0.0f; };
  EXPECT_THROW(MappedLayout(0, kGranularity, zero, {}), std::invalid_argument);
  EXPECT_THROW(MappedLayout(100, kGranularity, zero, {100}), std::invalid_argument);
  EXPECT_THROW(MappedLayout(100, kGranularity, zero, {5}), std::invalid_argument)
      << "its one slot is the own tile's: none left for the repeated one";
  EXPECT_THROW(MappedLayout(100, 6, zero, {}), std::invalid_argument);
}

}  // namespace
}  // namespace reduce::testing
