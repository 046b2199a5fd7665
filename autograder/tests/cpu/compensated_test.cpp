// Lab 18's ill-conditioned input (cancelling()) and the compensated sum's error bound, checked
// against a compensated sum simulated on the CPU in the shapes the contract allows.
// These need no GPU: they run everywhere, CI included.
#include <reduce/exact_sum.hpp>
#include <reduce/generators.hpp>
#include <reduce/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace reduce {
namespace {

TEST(Cancelling, ExactSumIsTheSmallIntegers) {
  for (std::size_t n : {1, 7, 1024, 1025, 1026, 4097, 100000}) {
    const std::vector<float> x = reduce::cancelling(n, 42 + n);
    reduce::ExactSum exact;
    exact.add(x.data(), x.size());
    EXPECT_EQ(exact.to_double(), reduce::cancelling_sum(n, 42 + n)) << "n = " << n;
  }
}

/// A float tree over x[lo, hi), halves of equal size: the best order a float sum can have.
float pairwise(const std::vector<float>& x, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return x[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return pairwise(x, lo, mid) + pairwise(x, mid, hi);
}

// A compensated sum simulated in float on the CPU, in the shape lab 18's contract allows: what
// the GPU's threads do, one thread after the other. Plain float operations in round to nearest
// (no fast math in this build): TwoSum and the double-float addition as on the GPU.

/// An unevaluated sum hi + lo of two floats.
struct FloatPair {
  float hi = 0.0f, lo = 0.0f;
};

/// TwoSum: s = fl(a + b) and the exact error, a + b = s + e.
FloatPair two_sum(float a, float b) {
  const float s = a + b;
  const float b_virtual = s - a;
  const float a_virtual = s - b_virtual;
  return {s, (a - a_virtual) + (b - b_virtual)};
}

/// FastTwoSum, exact for |a| >= |b|.
FloatPair fast_two_sum(float a, float b) {
  const float s = a + b;
  return {s, b - (s - a)};
}

/// The accurate double-float addition (Joldes, Muller, Popescu 2017, AccurateDWPlusDW).
FloatPair add_pairs(FloatPair a, FloatPair b) {
  FloatPair s = two_sum(a.hi, b.hi);
  const FloatPair t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, s.lo + t.hi);
  return fast_two_sum(s.hi, s.lo + t.lo);
}

/// How each simulated thread adds its elements.
enum class Chains {
  kNeumaier,     ///< Neumaier chains of at most the given length, pairs renormalised by TwoSum
  kDropsErrors,  ///< the same chains, but their pair is (s, 0): the errors are lost
  kFloat,        ///< a float sum of all the thread's elements, and a float tree: no compensation
};

struct Simulated {
  FloatPair root;         ///< the tree's pair (for kFloat, the float sum and 0)
  std::size_t depth = 0;  ///< double-float additions with two nonzero operands on a longest path
};

/// \p threads threads, thread t owning x[t], x[t + threads], ... (a grid-stride loop). Each adds
/// its elements in chains of at most \p chain elements and folds the chains' pairs one after the
/// other into its own pair with the double-float addition; then the threads' pairs meet in a
/// pairwise tree of double-float additions. kFloat: float running sums and a float tree.
Simulated simulate(const std::vector<float>& x, std::size_t threads, std::size_t chain,
                   Chains kind) {
  const std::size_t n = x.size();
  std::vector<FloatPair> level(threads);
  std::size_t most_chains = 0;
  for (std::size_t t = 0; t < threads; ++t) {
    FloatPair total;
    std::size_t chains = 0;
    for (std::size_t i = t; i < n;) {
      float s = 0.0f, c = 0.0f;
      for (std::size_t k = 0; k < chain && i < n; ++k, i += threads) {
        if (kind == Chains::kFloat) {
          s += x[i];
          continue;
        }
        const FloatPair e = two_sum(s, x[i]);
        s = e.hi;
        c += e.lo;
      }
      if (kind == Chains::kFloat)
        total.hi += s;
      else
        total = add_pairs(total, kind == Chains::kDropsErrors ? FloatPair{s, 0.0f} : two_sum(s, c));
      ++chains;
    }
    most_chains = std::max(most_chains, chains);
    level[t] = total;
  }
  std::size_t levels = 0;
  for (; level.size() > 1; ++levels) {
    std::vector<FloatPair> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < next.size(); ++i) {
      const FloatPair b = 2 * i + 1 < level.size() ? level[2 * i + 1] : FloatPair{};
      next[i] = kind == Chains::kFloat ? FloatPair{level[2 * i].hi + b.hi, 0.0f}
                                       : add_pairs(level[2 * i], b);
    }
    level.swap(next);
  }
  return {level[0], (most_chains == 0 ? 0 : most_chains - 1) + levels};
}

/// hi + lo - (the exact sum of x), computed exactly and rounded once to double.
double pair_error(FloatPair p, const std::vector<float>& x) {
  ExactSum s;
  for (float v : x) s.add(-v);
  s.add(p.hi);
  s.add(p.lo);
  return s.to_double();
}

/// A chain of \p length elements that steers every rounding of Neumaier's c the same way: 1,
/// then values below half an ulp of 1 (s stays 1 and each is its own exact error e), each chosen
/// among 2^12 candidates so that c + e lands as far from a float as rounding \p down (or up)
/// allows. The chain's pair then errs by a good part of the quadratic term c(L).
std::vector<float> steering_chain(std::size_t length, bool down) {
  std::vector<float> chain = {1.0f};
  float c = 0.0f;
  for (std::size_t k = 1; k < length; ++k) {
    float best = 0x1p-25f;
    double best_loss = -1;
    for (int j = 1; j <= 4096; ++j) {
      const float y = 0x1p-24f - static_cast<float>(j) * 0x1p-48f;  // in [2^-25, 2^-24)
      const double loss =
          (static_cast<double>(c) + y - static_cast<double>(c + y)) * (down ? 1 : -1);
      if (loss > best_loss) best_loss = loss, best = y;
    }
    chain.push_back(best);
    c += best;
  }
  return chain;
}

/// n = threads * chains * length elements laid out so that every thread's every chain is a
/// steering_chain(): rounding down in the first half of the threads and, negated, rounding up in
/// the second, so that every error points the same way while the halves cancel at the root.
std::vector<float> steering_input(std::size_t threads, std::size_t chains, std::size_t length) {
  const std::vector<float> down = steering_chain(length, true), up = steering_chain(length, false);
  std::vector<float> x(threads * chains * length);
  for (std::size_t t = 0; t < threads; ++t)
    for (std::size_t j = 0; j < chains; ++j)
      for (std::size_t k = 0; k < length; ++k)
        x[t + (j * length + k) * threads] = t < threads / 2 ? down[k] : -up[k];
  return x;
}

TEST(CompensatedBound, IsTheRoundingPlusTheAccumulation) {
  const double u = reduce::kFloatUnitRoundoff;
  EXPECT_NEAR(reduce::compensated_error_bound(1, 0, 1.0, 0.0), u * (1 + 2 * u), 1e-30);
  EXPECT_NEAR(reduce::compensated_error_bound(2, 9, 0.0, 1.0),
              27 / (1 - 4 * u) * u * u * (1 + 2 * u), 1e-40);
  // c(16) = 16 * 15 / 2 - 1 = 119, and the tree's 3 per level.
  EXPECT_NEAR(reduce::compensated_error_bound(16, 10, 0.0, 1.0), (119 + 30) * u * u, 1e-3 * u * u);
  EXPECT_EQ(reduce::kCompensatedChain, 16u);
  EXPECT_EQ(reduce::compensated_depth(1), 1u);
  EXPECT_EQ(reduce::compensated_depth(1024), 1u + 10u);
  EXPECT_EQ(reduce::compensated_depth(std::size_t{1} << 24), 64u + 24u);
  EXPECT_EQ(reduce::compensated_depth(std::size_t{1} << 28), 1024u + 28u);
}

// A correct implementation at the edge of what the contract allows: the fewest threads the
// course assumes (kMinReductionThreads), each with chains of the longest length allowed, folded
// one after the other, then a tree. Its pair (before the root's rounding) must stay within the
// accumulation term of the bound, and its float result within the bound, on random positive data
// (every partial sum as large as it can be), on cancelling() and on data that steer every
// rounding of every chain the same way.
TEST(CompensatedBound, HoldsForTheLongestChainsAndTheDeepestTreeAllowed) {
  const std::size_t threads = reduce::kMinReductionThreads, chain = reduce::kCompensatedChain;
  const std::size_t n = std::size_t{1} << 24;
  struct Case {
    const char* name;
    std::vector<float> x;
  };
  const Case cases[] = {{"uniform in [0, 1)", uniform(n, 11, 0.0f, 1.0f)},
                        {"cancelling", cancelling(n, 12)},
                        {"steering", steering_input(threads, n / threads / chain, chain)}};
  for (const Case& c : cases) {
    ASSERT_EQ(c.x.size(), n);
    const Simulated sim = simulate(c.x, threads, chain, Chains::kNeumaier);
    EXPECT_LE(sim.depth, compensated_depth(n)) << c.name;
    ExactSum exact;
    exact.add(c.x.data(), n);
    const double abs = absolute_sum(c.x);
    const double accumulation = compensated_error_bound(chain, compensated_depth(n), 0.0, abs);
    const double pair = std::fabs(pair_error(sim.root, c.x));
    EXPECT_LE(pair, accumulation) << c.name;
    const float result = sim.root.hi + sim.root.lo;
    const double bound =
        compensated_error_bound(chain, compensated_depth(n), exact.to_double(), abs);
    EXPECT_LE(std::fabs(result - exact.to_double()), bound) << c.name;
    if (std::string(c.name) == "steering")  // the chain term is no empty worst case
      EXPECT_GT(pair, 0.25 * compensated_error_bound(chain, 0, 0.0, abs)) << c.name;
  }
}

// The chain term is quadratic, so a chain may not be long: one chain of 16 steered elements
// stays within c(16), while chains of 256 exceed what chains of 16 and a tree as deep as their
// folds may err by.
TEST(CompensatedBound, LongChainsNeedTheirQuadraticTerm) {
  for (std::size_t length : {16u, 64u, 256u, 1024u}) {
    const std::vector<float> x = steering_chain(length, true);
    const Simulated sim = simulate(x, 1, length, Chains::kNeumaier);
    const double error = std::fabs(pair_error(sim.root, x)), abs = absolute_sum(x);
    EXPECT_LE(error, compensated_error_bound(length, 0, 0.0, abs)) << length;
    EXPECT_GT(error, 0.25 * compensated_error_bound(length, 0, 0.0, abs)) << length;
    if (length >= 256) {
      const std::size_t folds = length / kCompensatedChain;
      EXPECT_GT(error, compensated_error_bound(kCompensatedChain, folds, 0.0, abs)) << length;
    }
  }
}

/// A pair in a model of a tree: whether any element lies below it, and the most double-float
/// additions with two nonzero operands on a path down to a chain (an addition of an empty pair
/// is exact and does not count).
struct Subtree {
  bool nonempty = false;
  std::size_t depth = 0;
};

Subtree join(Subtree a, Subtree b) {
  if (!a.nonempty) return b;
  if (!b.nonempty) return a;
  return {true, std::max(a.depth, b.depth) + 1};
}

/// A block of 256 threads: a shuffle tree per warp, then one over the 8 warp totals in 32 lanes.
Subtree block_tree(std::vector<Subtree> v) {
  const auto warp_tree = [](Subtree* lanes) {
    for (std::size_t offset = 16; offset > 0; offset /= 2)
      for (std::size_t lane = 0; lane < offset; ++lane)
        lanes[lane] = join(lanes[lane], lanes[lane + offset]);
    return lanes[0];
  };
  std::vector<Subtree> totals(32);
  for (std::size_t w = 0; w < 8; ++w) totals[w] = warp_tree(&v[32 * w]);
  return warp_tree(totals.data());
}

/// The reference's tree (solutions/18_accuracy/sum_compensated.cu) for n elements on a grid of
/// at most \p full_grid blocks of 256: each thread's four accumulators in a grid-stride loop (the
/// tail into the first), chains of kCompensatedChain folded one after the other, the four
/// combined as (a0 + a1) + (a2 + a3), the block tree, one partial per block; then one block in
/// which thread b folds partials b, b + 256, ... and the same block tree.
std::size_t reference_compensated_depth(std::size_t n, std::size_t full_grid) {
  const std::size_t grid = std::clamp<std::size_t>((n + 255) / 256, 1, full_grid);
  const std::size_t stride = grid * 256;
  const auto accumulator = [](std::size_t elements) {
    const std::size_t chains = (elements + kCompensatedChain - 1) / kCompensatedChain;
    return Subtree{elements > 0, chains == 0 ? 0 : chains - 1};
  };
  std::vector<Subtree> partials(grid);
  for (std::size_t b = 0; b < grid; ++b) {
    std::vector<Subtree> threads(256);
    for (std::size_t t = 0; t < 256; ++t) {
      const std::size_t g = b * 256 + t;
      const std::size_t rounds =
          n > g + 3 * stride ? (n - 1 - g - 3 * stride) / (4 * stride) + 1 : 0;
      const std::size_t next = g + 4 * stride * rounds;
      const std::size_t tail = n > next ? (n - next + stride - 1) / stride : 0;
      threads[t] = join(join(accumulator(rounds + tail), accumulator(rounds)),
                        join(accumulator(rounds), accumulator(rounds)));
    }
    partials[b] = block_tree(threads);
  }
  if (grid == 1) return partials[0].depth;
  std::vector<Subtree> threads(256);
  for (std::size_t b = 0; b < grid; ++b) threads[b % 256] = join(threads[b % 256], partials[b]);
  return block_tree(threads).depth;
}

// The contract's depth admits the reference's tree at every size, on grids from the course's
// fewest threads (64 blocks of 256) to a full H100 or H200 (132 SMs of 8 blocks) and beyond.
TEST(CompensatedBound, DepthAdmitsTheReferenceTree) {
  std::vector<std::size_t> sizes = {1,      2,      33,     1000,   1025,   4097,   49153,  65537,
                                    131073, 262144, 262145, 300000, 540673, 811009, 1048583};
  for (std::size_t n = 3; n <= (std::size_t{1} << 28); n = n * 5 / 3 + 1) sizes.push_back(n);
  for (std::size_t full_grid : {64u, 528u, 1056u, 1184u})
    for (std::size_t n : sizes)
      EXPECT_LE(reference_compensated_depth(n, full_grid), compensated_depth(n))
          << "n = " << n << ", at most " << full_grid << " blocks";
}

// Wrong ones fail: on cancelling() at sizes the GPU tests use, a float tree, and compensated
// chains that drop their errors, miss the bound, while the compensated sum meets it.
TEST(Cancelling, DefeatsAFloatTreeButNotTheCompensatedBound) {
  const std::size_t threads = reduce::kMinReductionThreads, chain = reduce::kCompensatedChain;
  for (std::size_t n : {(std::size_t{1} << 20) + 7, std::size_t{1} << 24}) {
    const std::vector<float> x = reduce::cancelling(n, 7);
    const double exact = reduce::cancelling_sum(n, 7);
    const double bound =
        reduce::compensated_error_bound(chain, compensated_depth(n), exact, absolute_sum(x));
    const auto error = [&](Chains kind) {
      const FloatPair root = simulate(x, threads, chain, kind).root;
      return std::fabs(static_cast<double>(root.hi + root.lo) - exact);
    };
    EXPECT_GT(std::fabs(pairwise(x, 0, n) - exact), 10 * bound) << n;
    EXPECT_GT(std::fabs(reduce::serial_float_sum(x.data(), n) - exact), 10 * bound) << n;
    EXPECT_GT(error(Chains::kFloat), 10 * bound) << n;
    EXPECT_GT(error(Chains::kDropsErrors), 10 * bound) << n;
    EXPECT_LE(error(Chains::kNeumaier), bound) << n;
    EXPECT_LT(bound, 2e-4 * std::fabs(exact)) << n;  // not a few percent of the sum (77 here)
  }
}

}  // namespace
}  // namespace reduce
