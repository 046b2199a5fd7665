// The stub message, the CPU references and the error bounds of common/ that every sum's test
// compares against.
// These need no GPU: they run everywhere, CI included.
#include <reduce/generators.hpp>
#include <reduce/not_implemented.hpp>
#include <reduce/reference.hpp>

#include "float_trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace reduce {
namespace {

// ---- stub message ----------------------------------------------------------------------------

TEST(NotImplemented, NamesTheLabFile) {
  EXPECT_EQ(lab_relative_path("/home/s/course/labs/04_sequential/sum.cu"),
            "labs/04_sequential/sum.cu");
  EXPECT_EQ(lab_relative_path("/tmp/submission/10_product/product.cu"),
            "labs/10_product/product.cu");
  EXPECT_EQ(lab_relative_path("sum.cu"), "labs/sum.cu");
  const NotImplemented e("/x/labs/01_atomic_naive/sum.cu");
  EXPECT_STREQ(e.what(), "not implemented: see labs/01_atomic_naive/sum.cu");
}

// ---- references and error bounds -------------------------------------------------------------

TEST(Reference, SumsInDouble) {
  const std::vector<float> x = {1e8f, 1.0f, -1e8f, 0.5f};
  EXPECT_EQ(reference_sum(x), 1.5);  // a float accumulator would lose the 1.0
  EXPECT_EQ(absolute_sum(x), 2e8 + 1.5);
  EXPECT_EQ(reference_sum({}), 0.0);
}

TEST(Reference, SerialFloatSumStopsGrowingAtTwoToThe24) {
  const std::vector<float> ones((1u << 24) + 100, 1.0f);
  EXPECT_EQ(serial_float_sum(ones.data(), ones.size()), 16777216.0f);
  EXPECT_EQ(reference_sum(ones), 16777316.0);
}

TEST(Bounds, DepthsAndGamma) {
  EXPECT_EQ(serial_depth(0), 0u);
  EXPECT_EQ(serial_depth(10), 9u);
  EXPECT_EQ(pairwise_depth(1), 0u);
  EXPECT_EQ(pairwise_depth(1024), 10u);
  EXPECT_EQ(pairwise_depth(1025), 11u);
  EXPECT_EQ(tree_depth(1024), 1u + 10u);
  EXPECT_EQ(tree_depth(std::size_t{1} << 24), 1024u + 24u);
  EXPECT_DOUBLE_EQ(gamma(0), 0.0);
  EXPECT_DOUBLE_EQ(gamma(1), kFloatUnitRoundoff / (1 - kFloatUnitRoundoff));
  EXPECT_TRUE(std::isinf(gamma(std::size_t{1} << 24)));
}

// Lab 15's contract (order "tree_atomic") admits the capstone's designs on any GPU from 40 to 256
// SMs: one block of 256 or 1024 threads up to 2^16 floats, and above that a grid of at most two
// waves of eight 256-thread blocks per SM, each block reading an even share of whole tiles of
// 1024 float4s, whose partials meet in float atomics on the output (the fast mode; the
// deterministic mode's last-block combine is a tree and shallower).
TEST(Bounds, TreeAtomicDepthAdmitsTheCapstone) {
  const auto ceil_div = [](std::size_t a, std::size_t b) { return (a + b - 1) / b; };
  for (std::size_t sms : {40u, 108u, 132u, 148u, 256u}) {
    for (std::size_t n = 1; n <= (std::size_t{1} << 31); n = n * 3 / 2 + 1) {
      std::size_t depth = 0;
      if (n <= (std::size_t{1} << 16)) {
        const std::size_t threads = n <= 4096 ? 256 : 1024;
        depth = ceil_div(n, threads) + pairwise_depth(threads);
      } else {
        const std::size_t waves = n >= (std::size_t{1} << 27) ? 2 : 1;
        const std::size_t tiles = ceil_div(n / 4, 1024);
        const std::size_t grid = std::min(tiles, sms * 8 * waves);
        const std::size_t chain = ceil_div(tiles, grid) * 1024 / 256 * 4 + 3;  // + head and tail
        depth = chain + pairwise_depth(256) + grid;
      }
      EXPECT_LE(std::min(depth, serial_depth(n)), tree_atomic_depth(n)) << sms << " SMs, n = " << n;
      EXPECT_GE(tree_atomic_depth(n), std::min(tree_depth(n), serial_depth(n))) << "n = " << n;
    }
  }
  EXPECT_EQ(tree_atomic_depth(1), 0u);
  EXPECT_EQ(tree_atomic_depth(std::size_t{1} << 16), 64u + 16u + 4096u);
  EXPECT_EQ(tree_atomic_depth(std::size_t{1} << 28), 16384u + 28u + 4096u);
}

// Lab 17's contract admits every strategy its lesson teaches: the depth of each one's tree at
// every length it may take must stay within segment_tree_depth().
TEST(Bounds, SegmentDepthAdmitsEveryTaughtTier) {
  const auto ceil_div = [](std::size_t a, std::size_t b) { return (a + b - 1) / b; };
  for (std::size_t length = 1; length <= (std::size_t{1} << 22); length = length * 3 / 2 + 1) {
    const std::size_t allowed = segment_tree_depth(length);
    const std::size_t levels = pairwise_depth(length);
    if (length <= kSegmentThreadChain)  // a thread per row, adding its elements one by one
      EXPECT_GE(allowed, serial_depth(length)) << "a thread per row of " << length;
    for (std::size_t lanes : {2u, 4u, 8u, 16u, 32u})  // a group of lanes per row, then shuffles
      if (length <= kSegmentThreadChain * lanes || lanes == kMinSegmentLanes)
        EXPECT_GE(allowed, std::min(length, ceil_div(length, lanes) + pairwise_depth(lanes)))
            << lanes << " lanes per row of " << length;
    // a block of 256 per row, then its tree; split rows are shallower still
    EXPECT_GE(allowed, std::min(length, ceil_div(length, 256) + std::min<std::size_t>(8, levels)))
        << "a block per row of " << length;
  }
  EXPECT_EQ(segment_tree_depth(16), 16u);
  EXPECT_EQ(segment_tree_depth(1024), 64u + 10u);
  EXPECT_EQ(segment_tree_depth(std::size_t{1} << 20), 32768u + 20u);
}

// The bounds must hold for real float summations in the orders they describe, and be tight
// enough to notice an error the size of one element.
TEST(Bounds, HoldForSerialAndPairwiseFloatSums) {
  for (std::size_t n : {1000u, 100000u, 1000000u}) {
    const std::vector<float> x = uniform(n, n, 0.0f, 1.0f);
    const double exact = reference_sum(x), abs = absolute_sum(x);
    const double serial_error = std::fabs(serial_float_sum(x.data(), n) - exact);
    EXPECT_LE(serial_error, sum_error_bound(serial_depth(n), n, abs));
    const float tree = pairwise_float_sum(x);
    const double pairwise_error = std::fabs(tree - exact);
    const double pairwise_bound = sum_error_bound(pairwise_depth(n), n, abs);
    EXPECT_LE(pairwise_error, pairwise_bound);
    if (n <= 100000) {
      EXPECT_LT(pairwise_bound, 0.5) << "a dropped element of about 0.5 must break the bound";
    }
  }
}

}  // namespace
}  // namespace reduce
