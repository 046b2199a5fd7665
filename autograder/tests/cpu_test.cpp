// What needs no GPU: input generators, CPU references, error bounds and the stub message.
// These run everywhere, CI included.
#include <reduce/exact_sum.hpp>
#include <reduce/generators.hpp>
#include <reduce/not_implemented.hpp>
#include <reduce/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce {
namespace {

// ---- the exact sum and its correct rounding ----------------------------------------------------

float bits_to_float(std::uint32_t bits) {
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float exact_float(std::initializer_list<float> x) {
  return correctly_rounded_sum(std::vector<float>(x));
}

TEST(ExactSum, CancellationLosesNothing) {
  EXPECT_EQ(exact_float({1e30f, 1.0f, -1e30f}), 1.0f);
  EXPECT_EQ(exact_float({3.0e38f, 3.0e38f, -3.0e38f, -3.0e38f, 0x1p-149f}), 0x1p-149f);
  // A float running sum of these gives 0 (1 is lost against 2^24 twice over).
  EXPECT_EQ(exact_float({0x1p24f, 1.0f, 1.0f, -0x1p24f}), 2.0f);
  ExactSum s;
  s.add(0x1p100f);
  s.add(0x1p-149f);
  EXPECT_EQ(s.to_double(), 0x1p100);  // 2^-249 below the leading bit: gone in a double too
  EXPECT_EQ(s.sign(), 1);
}

TEST(ExactSum, RoundsOnceToNearestTiesToEven) {
  EXPECT_EQ(exact_float({0x1p24f, 1.0f}), 0x1p24f);                          // tie: down to even
  EXPECT_EQ(exact_float({0x1p24f + 2.0f, 1.0f}), 0x1p24f + 4.0f);            // tie: up to even
  EXPECT_EQ(exact_float({0x1p24f, 1.0f, 0x1p-20f}), 0x1p24f + 2.0f);         // above the tie: up
  EXPECT_EQ(exact_float({0x1p24f, 1.0f, -0x1p-20f}), 0x1p24f);               // below the tie: down
  EXPECT_EQ(exact_float({0x1p-149f, 0x1p-149f, 0x1p-149f}), 3 * 0x1p-149f);  // subnormals
  // The largest float plus half its last step rounds to infinity (2^128), below it does not.
  const float max = std::numeric_limits<float>::max();
  EXPECT_EQ(exact_float({max, 0x1p103f}), std::numeric_limits<float>::infinity());
  EXPECT_EQ(exact_float({max, 0x1p102f}), max);
  EXPECT_EQ(exact_float({-max, -max}), -std::numeric_limits<float>::infinity());
  ExactSum big;
  big.add(max);
  big.add(max);
  EXPECT_EQ(big.to_double(), 2.0 * static_cast<double>(max));  // exact in a double
}

TEST(ExactSum, ZerosInfinitiesAndNaN) {
  EXPECT_TRUE(std::signbit(exact_float({-0.0f, -0.0f})));
  EXPECT_FALSE(std::signbit(exact_float({-0.0f, 0.0f})));
  EXPECT_FALSE(std::signbit(exact_float({1.0f, -1.0f})));
  EXPECT_FALSE(std::signbit(correctly_rounded_sum({})));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exact_float({1.0f, inf, -5.0f}), inf);
  EXPECT_EQ(exact_float({-inf, 3.0f}), -inf);
  EXPECT_TRUE(std::isnan(exact_float({inf, -inf})));
  EXPECT_TRUE(std::isnan(exact_float({1.0f, bits_to_float(0x7FC00001u)})));
}

TEST(ExactSum, OrderAndGroupingDoNotMatter) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-140, 120);
  std::vector<float> x(5000);
  for (float& v : x) v = std::ldexp(mantissa(rng), exponent(rng));
  const float forward = correctly_rounded_sum(x);
  std::shuffle(x.begin(), x.end(), rng);
  ExactSum halves, second;
  halves.add(x.data(), x.size() / 2);
  second.add(x.data() + x.size() / 2, x.size() - x.size() / 2);
  halves.add(second);
  EXPECT_EQ(halves.to_float(), forward);
  EXPECT_EQ(correctly_rounded_sum(x), forward);
}

TEST(ExactSum, MatchesQuadPrecisionWhereThatIsExact) {
  // Terms with exponents in [-30, 30]: every partial sum of 10^5 of them fits in 113 bits, so
  // __float128 adds them exactly and its conversion to float rounds once, as ExactSum must.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> x(100000);
    __float128 quad = 0;
    ExactSum sum;
    for (float& v : x) {
      v = std::ldexp(mantissa(rng), exponent(rng));
      quad += v;
      sum.add(v);
    }
    EXPECT_EQ(sum.to_float(), static_cast<float>(quad)) << "trial " << trial;
    EXPECT_EQ(sum.to_double(), static_cast<double>(quad)) << "trial " << trial;
  }
}

TEST(ExactSum, ManyTermsCarryCorrectly) {
  // 2^30 + 5 additions pass the point where the limbs must pass their carries on, each adding
  // 0xFFFFFF00 to the same limb (mantissa 2^24 - 1 at bit 8 of it).
  const float x = std::ldexp(static_cast<float>(0xFFFFFF), -141);
  const std::size_t n = (std::size_t{1} << 30) + 5;
  ExactSum sum;
  for (std::size_t i = 0; i < n; ++i) sum.add(x);
  const __float128 exact = static_cast<__float128>(n) * x;  // 55 significant bits: exact
  EXPECT_EQ(sum.to_double(), static_cast<double>(exact));
  EXPECT_EQ(sum.to_float(), static_cast<float>(exact));
  ExactSum negative;
  for (int i = 0; i < 3; ++i) negative.add(-std::numeric_limits<float>::max());
  negative.add(sum);
  EXPECT_EQ(negative.sign(), -1);
  EXPECT_EQ(negative.to_float(), -std::numeric_limits<float>::infinity());
}

// ---- lab 18's ill-conditioned input and its bound --------------------------------------------

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

// ---- exact-by-construction inputs ------------------------------------------------------------

class ExactIntegers : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ExactIntegers, AreIntegersWithinTheBudget) {
  const std::size_t n = GetParam();
  const std::vector<float> x = exact_integers(n, 7);
  ASSERT_EQ(x.size(), n);
  for (float v : x) ASSERT_EQ(v, std::trunc(v));
  EXPECT_LE(absolute_sum(x), kExactBudget);
  if (static_cast<double>(n) <= kExactBudget) {
    EXPECT_EQ(std::count(x.begin(), x.end(), 0.0f), 0) << "dense kinds must hold no zero";
  } else {
    EXPECT_GT(absolute_sum(x), 0.0);
  }
}

TEST_P(ExactIntegers, AnyOrderGivesTheSameFloatSum) {
  const std::size_t n = GetParam();
  std::vector<float> x = exact_integers(n, 11);
  const float expected = static_cast<float>(reference_sum(x));
  EXPECT_EQ(serial_float_sum(x.data(), n), expected);
  std::reverse(x.begin(), x.end());
  EXPECT_EQ(serial_float_sum(x.data(), n), expected);
  std::shuffle(x.begin(), x.end(), std::mt19937_64(3));
  EXPECT_EQ(serial_float_sum(x.data(), n), expected);
  // Pairwise order as a GPU tree would add.
  std::vector<float> level = x;
  while (level.size() > 1) {
    std::vector<float> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < next.size(); ++i)
      next[i] = level[2 * i] + (2 * i + 1 < level.size() ? level[2 * i + 1] : 0.0f);
    level.swap(next);
  }
  EXPECT_EQ(level[0], expected);
}

TEST_P(ExactIntegers, DroppingAnElementChangesTheSum) {
  const std::size_t n = GetParam();
  std::vector<float> x = exact_integers(n, 13);
  const double full = reference_sum(x);
  const auto nonzero = std::find_if(x.rbegin(), x.rend(), [](float v) { return v != 0.0f; });
  ASSERT_NE(nonzero, x.rend());
  *nonzero = 0.0f;
  EXPECT_NE(static_cast<float>(reference_sum(x)), static_cast<float>(full));
}

TEST_P(ExactIntegers, SumWithoutMaterializingMatchesTheElements) {
  const std::size_t n = GetParam();
  const std::vector<float> x = exact_integers(n, 21);
  EXPECT_EQ(exact_integers_sum(n, 21), reference_sum(x));
  for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) EXPECT_EQ(exact_integer_at(n, 21, i), x[i]);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExactIntegers,
                         ::testing::Values<std::size_t>(1, 33, 1025, (1u << 21), (1u << 21) + 1,
                                                        (1u << 24), (1u << 24) + 1, (1u << 25) + 3),
                         ::testing::PrintToStringParamName());

TEST(Generators, SameSeedSameDataOtherSeedOtherData) {
  EXPECT_EQ(exact_integers(5000, 1), exact_integers(5000, 1));
  EXPECT_NE(exact_integers(5000, 1), exact_integers(5000, 2));
  EXPECT_EQ(wide_range(5000, 9), wide_range(5000, 9));
  EXPECT_NE(mix(1, 2), mix(2, 1));
}

TEST(Generators, SentinelHasOneNonZero) {
  const std::vector<float> x = sentinel(1000, 999, 5.0f);
  EXPECT_EQ(std::count(x.begin(), x.end(), 0.0f), 999);
  EXPECT_EQ(x[999], 5.0f);
}

TEST(Generators, UniformStaysInItsInterval) {
  const std::vector<float> x = uniform(100000, 5, -2.0f, 3.0f);
  EXPECT_GE(*std::min_element(x.begin(), x.end()), -2.0f);
  EXPECT_LT(*std::max_element(x.begin(), x.end()), 3.0f);
  const double mean = reference_sum(x) / x.size();
  EXPECT_NEAR(mean, 0.5, 0.02);
}

TEST(Generators, FloatBelowIsTheNextFloatTowardsMinusInfinity) {
  for (float x : {1.0f, -1.0f, 0.0f, -0.0f, 3.0f, 1e-40f, -1e30f, 0x1p-149f})
    EXPECT_EQ(float_below(x), std::nextafter(x, -INFINITY)) << x;
}

TEST(Generators, UniformAtIsElementIOfUniform) {
  const std::vector<float> x = uniform(4096, 17, -1.0f, 1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(uniform_at(17, i, -1.0f, 1.0f), x[i]) << i;
}

TEST(Generators, WideRangeSpansFortyBinades) {
  const std::vector<float> x = wide_range(100000, 5);
  int lo = 100, hi = -100, negative = 0;
  for (float v : x) {
    int e;
    std::frexp(v, &e);
    lo = std::min(lo, e - 1);
    hi = std::max(hi, e - 1);
    negative += v < 0;
  }
  EXPECT_EQ(lo, -20);
  EXPECT_EQ(hi, 20);
  EXPECT_NEAR(negative, 50000, 1000);
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
    std::vector<float> level = x;
    while (level.size() > 1) {
      std::vector<float> next((level.size() + 1) / 2);
      for (std::size_t i = 0; i < next.size(); ++i)
        next[i] = level[2 * i] + (2 * i + 1 < level.size() ? level[2 * i + 1] : 0.0f);
      level.swap(next);
    }
    const double pairwise_error = std::fabs(level[0] - exact);
    const double pairwise_bound = sum_error_bound(pairwise_depth(n), n, abs);
    EXPECT_LE(pairwise_error, pairwise_bound);
    if (n <= 100000) {
      EXPECT_LT(pairwise_bound, 0.5) << "a dropped element of about 0.5 must break the bound";
    }
  }
}

// ---- exercises (labs 10-14): references, bounds and adversarial inputs -------------------------

std::uint32_t float_bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ExerciseReference, MaximumFollowsIeee2019) {
  EXPECT_EQ(reference_maximum({-3.0f, -1.0f, -2.0f}), -1.0f) << "not 0: the identity is -inf";
  EXPECT_EQ(float_bits(reference_maximum({-0.0f, 0.0f})), float_bits(0.0f));
  EXPECT_EQ(float_bits(reference_maximum({0.0f, -0.0f})), float_bits(0.0f));
  EXPECT_EQ(float_bits(reference_maximum({-0.0f, -0.0f})), float_bits(-0.0f));
  EXPECT_EQ(float_bits(reference_maximum({-1.0f, -0.0f, -2.0f})), float_bits(-0.0f));
  EXPECT_EQ(reference_maximum({}), -kInf);
  EXPECT_EQ(reference_maximum({-kInf, -kInf}), -kInf);
  EXPECT_EQ(reference_maximum({1.0f, kInf, 2.0f}), kInf);
  EXPECT_TRUE(std::isnan(reference_maximum({kNaN, 1.0f})));
  EXPECT_TRUE(std::isnan(reference_maximum({1.0f, kNaN})));
  EXPECT_TRUE(std::isnan(reference_maximum({kInf, 2.0f, -kNaN})));
}

TEST(ExerciseReference, MinimumFollowsIeee2019) {
  EXPECT_EQ(reference_minimum({3.0f, 1.0f, 2.0f}), 1.0f) << "not 0: the identity is +inf";
  EXPECT_EQ(float_bits(reference_minimum({0.0f, -0.0f})), float_bits(-0.0f));
  EXPECT_EQ(float_bits(reference_minimum({-0.0f, 0.0f})), float_bits(-0.0f));
  EXPECT_EQ(float_bits(reference_minimum({0.0f, 0.0f})), float_bits(0.0f));
  EXPECT_EQ(reference_minimum({}), kInf);
  EXPECT_EQ(reference_minimum({1.0f, -kInf}), -kInf);
  EXPECT_TRUE(std::isnan(reference_minimum({-kInf, kNaN})));
  EXPECT_TRUE(std::isnan(reference_minimum({kNaN, -kInf})));
}

// The GPU reduces in an order of its own: the operators must give the same bits in any order.
TEST(ExerciseReference, MaxAndMinAreAssociativeAndCommutativeOnSpecialValues) {
  const std::vector<float> specials = {-kInf, -2.0f, -0.0f, 0.0f, 1e-45f, 3.0f, kInf, kNaN};
  auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || float_bits(a) == float_bits(b);
  };
  for (float a : specials) {
    for (float b : specials) {
      EXPECT_TRUE(same(ieee_maximum(a, b), ieee_maximum(b, a))) << a << " " << b;
      EXPECT_TRUE(same(ieee_minimum(a, b), ieee_minimum(b, a))) << a << " " << b;
      for (float c : specials) {
        EXPECT_TRUE(same(ieee_maximum(a, ieee_maximum(b, c)), ieee_maximum(ieee_maximum(a, b), c)));
        EXPECT_TRUE(same(ieee_minimum(a, ieee_minimum(b, c)), ieee_minimum(ieee_minimum(a, b), c)));
      }
    }
  }
}

TEST(ExerciseReference, MinimumMirrorsMaximum) {
  std::vector<float> x = signed_mix(100000, 3, 0.05, 0.001);
  std::vector<float> negated = x;
  for (float& v : negated) v = -v;
  EXPECT_EQ(float_bits(reference_minimum(x)), float_bits(-reference_maximum(negated)));
  std::vector<float> zeros = signed_zeros(1000, 4);
  EXPECT_EQ(float_bits(reference_maximum(zeros)), float_bits(0.0f));
  EXPECT_EQ(float_bits(reference_minimum(zeros)), float_bits(-0.0f));
}

TEST(ExerciseReference, ArgmaxFirstIndexFirstNaN) {
  EXPECT_EQ(reference_argmax({-3.0f, -1.0f, -2.0f}), 1);
  EXPECT_EQ(reference_argmax({1.0f, 5.0f, 5.0f, 2.0f}), 1) << "ties: the first index";
  EXPECT_EQ(reference_argmax({-1.0f, -0.0f, 0.0f}), 1) << "+0.0 and -0.0 tie";
  EXPECT_EQ(reference_argmax({0.0f, -0.0f}), 0);
  EXPECT_EQ(reference_argmax({-kInf, -kInf}), 0);
  EXPECT_EQ(reference_argmax({kInf, 2.0f, kNaN, kNaN}), 2) << "the first NaN wins";
  EXPECT_EQ(reference_argmax({kNaN}), 0);
  EXPECT_THROW(reference_argmax({}), std::invalid_argument);
  const std::vector<float> x = ties(100000, 8, 3.0f, {99999, 5000, 70000});
  EXPECT_EQ(reference_argmax(x), 5000);
}

TEST(ExerciseReference, ProductInDoubleWithSpecialValues) {
  EXPECT_EQ(reference_product({}), 1.0);
  EXPECT_EQ(reference_product({2.0f, 3.0f, 4.0f}), 24.0);
  EXPECT_EQ(reference_product({-1.0f, -2.0f, -3.0f}), -6.0);
  EXPECT_TRUE(std::signbit(reference_product({-1.0f, 0.0f})));
  EXPECT_EQ(reference_product({-1.0f, 0.0f}), 0.0);
  EXPECT_TRUE(std::isnan(reference_product({0.0f, kInf})));
  EXPECT_TRUE(std::isnan(reference_product({2.0f, kNaN})));
  EXPECT_EQ(reference_product({-2.0f, kInf}), -std::numeric_limits<double>::infinity());
  // 2^200 is finite in double and overflows float; 2^-300 underflows float but not double.
  EXPECT_EQ(reference_product(std::vector<float>(200, 2.0f)), std::ldexp(1.0, 200));
  EXPECT_EQ(static_cast<float>(reference_product(std::vector<float>(200, 2.0f))), kInf);
  EXPECT_EQ(reference_product(std::vector<float>(300, 0.5f)), std::ldexp(1.0, -300));
  // Far beyond double's range: the exponent is kept apart, so only the final value saturates.
  EXPECT_EQ(reference_product(std::vector<float>(2000, 2.0f)),
            std::numeric_limits<double>::infinity());
  std::vector<float> up_and_down(4000, 2.0f);
  std::fill(up_and_down.begin() + 2000, up_and_down.end(), 0.5f);
  EXPECT_EQ(reference_product(up_and_down), 1.0) << "2^2000 * 2^-2000 computed without overflow";
}

/// A float product in a given order: serial left to right.
float serial_float_product(const std::vector<float>& x) {
  float p = 1.0f;
  for (float v : x) p *= v;
  return p;
}

/// A float product as a pairwise tree over neighbours.
float pairwise_float_product(std::vector<float> level) {
  if (level.empty()) return 1.0f;
  while (level.size() > 1) {
    std::vector<float> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < next.size(); ++i)
      next[i] = level[2 * i] * (2 * i + 1 < level.size() ? level[2 * i + 1] : 1.0f);
    level.swap(next);
  }
  return level[0];
}

// Lesson 11's table: one exact product (1), four orders, four different float results.
TEST(ExerciseReference, ProductOrderDecidesOverflowAndUnderflow) {
  const float big = std::ldexp(1.0f, 100), small = std::ldexp(1.0f, -100);
  const std::vector<float> x = {big, big, small, small};
  EXPECT_EQ(reference_product(x), 1.0);
  EXPECT_EQ(serial_float_product(x), kInf) << "left to right: 2^200 overflows first";
  EXPECT_EQ(serial_float_product({small, small, big, big}), 0.0f)
      << "right to left: 2^-200 underflows first";
  EXPECT_TRUE(std::isnan(pairwise_float_product(x))) << "neighbours: inf * 0";
  EXPECT_EQ((big * small) * (big * small), 1.0f)
      << "strided pairs, as a GPU tree pairs i and i+n/2";
}

TEST(ExerciseGenerators, ExactProductFactorsGiveOneProductInAnyOrder) {
  for (std::size_t n : {1u, 3u, 1000u, 1000003u}) {
    std::vector<float> x = exact_product_factors(n, n);
    std::size_t twos = 0, halves = 0;
    for (float v : x) {
      const float m = std::fabs(v);
      ASSERT_TRUE(m == 1.0f || m == 2.0f || m == 0.5f) << v;
      twos += m == 2.0f;
      halves += m == 0.5f;
    }
    EXPECT_LE(twos, kProductExponentBudget);
    EXPECT_LE(halves, kProductExponentBudget);
    if (n >= 1000) {
      EXPECT_GT(twos + halves, 0u) << "the input must hold factors that are not +-1";
    }
    const float expected = static_cast<float>(reference_product(x));
    EXPECT_EQ(float_bits(serial_float_product(x)), float_bits(expected));
    EXPECT_EQ(float_bits(pairwise_float_product(x)), float_bits(expected));
    std::reverse(x.begin(), x.end());
    EXPECT_EQ(float_bits(serial_float_product(x)), float_bits(expected));
    std::shuffle(x.begin(), x.end(), std::mt19937_64(n));
    EXPECT_EQ(float_bits(serial_float_product(x)), float_bits(expected));
  }
}

TEST(ExerciseGenerators, DroppingAFactorChangesTheExactProduct) {
  std::vector<float> x = exact_product_factors(100000, 21);
  const double full = reference_product(x);
  const auto not_one = std::find_if(x.begin(), x.end(), [](float v) { return v != 1.0f; });
  ASSERT_NE(not_one, x.end());
  *not_one = 1.0f;
  EXPECT_NE(static_cast<float>(reference_product(x)), static_cast<float>(full));
}

TEST(ExerciseReference, MeanInDouble) {
  EXPECT_TRUE(std::isnan(reference_mean({})));
  EXPECT_EQ(reference_mean({1.0f, 2.0f, 3.0f, 4.0f}), 2.5);
  // A float running sum stops at 2^24: the naive mean of 2^25 ones is 0.5, the reference 1.
  const std::vector<float> ones(std::size_t{1} << 25, 1.0f);
  EXPECT_EQ(reference_mean(ones), 1.0);
  EXPECT_EQ(serial_float_sum(ones.data(), ones.size()) / static_cast<float>(ones.size()), 0.5f);
}

TEST(ExerciseBounds, ProductBoundHoldsAndIsTightEnough) {
  for (std::size_t n : {1000u, 100000u, 1000000u}) {
    const std::vector<float> x = uniform(n, n + 1, 1.0f - 0x1p-9f, 1.0f + 0x1p-9f);
    const double exact = reference_product(x);
    const double bound = product_relative_error_bound(n);
    EXPECT_LE(std::fabs(serial_float_product(x) - exact) / std::fabs(exact), bound) << n;
    EXPECT_LE(std::fabs(pairwise_float_product(x) - exact) / std::fabs(exact), bound) << n;
    if (n <= 1000) {
      // Dropping one factor changes the product by up to 2^-9 relative; the worst-case bound
      // sees that in short inputs only (gamma(n - 1) passes 2^-9 near 30000 factors).
      std::vector<float> dropped = x;
      const auto far = std::max_element(dropped.begin(), dropped.end(), [](float a, float b) {
        return std::fabs(a - 1.0f) < std::fabs(b - 1.0f);
      });
      *far = 1.0f;
      EXPECT_GT(std::fabs(serial_float_product(dropped) - exact) / std::fabs(exact), bound) << n;
    }
  }
  EXPECT_TRUE(std::isinf(gamma((std::size_t{1} << 24) - 1)) ||
              gamma((std::size_t{1} << 24) - 1) > 1.0);
}

// Why the product bound is the worst case and not a probabilistic one: the roundings of a
// product of factors near 1 are biased, so their errors add up far faster than sqrt(n) u.
TEST(ExerciseBounds, ProductRoundingsOfFactorsNearOneAreBiased) {
  const std::size_t n = std::size_t{1} << 22;
  const std::vector<float> x = uniform(n, 5, 1.0f - 0x1p-9f, 1.0f + 0x1p-9f);
  const double exact = reference_product(x);
  const double error = std::fabs(pairwise_float_product(x) - exact) / std::fabs(exact);
  const double independent_estimate = 8.0 * std::sqrt(static_cast<double>(n)) * kFloatUnitRoundoff;
  EXPECT_GT(error, independent_estimate)
      << "8 sqrt(n) u would be a safe bound if roundings were independent";
  EXPECT_LE(error, product_relative_error_bound(n));
}

TEST(ExerciseBounds, MeanBoundHoldsAndSeesADroppedElement) {
  for (std::size_t n : {1000u, 100000u, 1000000u}) {
    std::vector<float> x = uniform(n, n + 2, 0.0f, 1.0f);
    const double exact = reference_mean(x);
    const double bound = mean_error_bound(tree_depth(n), n, absolute_sum(x), exact);
    std::vector<float> level = x;
    while (level.size() > 1) {
      std::vector<float> next((level.size() + 1) / 2);
      for (std::size_t i = 0; i < next.size(); ++i)
        next[i] = level[2 * i] + (2 * i + 1 < level.size() ? level[2 * i + 1] : 0.0f);
      level.swap(next);
    }
    const float tree_mean = static_cast<float>(static_cast<double>(level[0]) / n);
    EXPECT_LE(std::fabs(tree_mean - exact), bound) << n;
    if (n <= 100000) {
      const float dropped = static_cast<float>((static_cast<double>(level[0]) - 0.5) / n);
      EXPECT_GT(std::fabs(dropped - exact), bound) << "a dropped element of 0.5 must break it";
    }
  }
}

TEST(ExerciseGenerators, AdversarialInputsAreWhatTheySay) {
  const std::vector<float> negative = all_negative(100000, 1);
  EXPECT_LT(*std::max_element(negative.begin(), negative.end()), 0.0f);
  EXPECT_GE(*std::min_element(negative.begin(), negative.end()), -1024.0f);

  const std::vector<float> zeros = signed_zeros(1000, 2);
  std::size_t minus = 0;
  for (float v : zeros) {
    ASSERT_EQ(v, 0.0f);
    minus += std::signbit(v);
  }
  EXPECT_GT(minus, 400u);
  EXPECT_LT(minus, 600u);

  const std::vector<float> mix = signed_mix(200000, 3, 0.1, 0.01);
  std::size_t z = 0, inf = 0, negative_count = 0;
  for (float v : mix) {
    z += v == 0.0f;
    inf += std::isinf(v);
    negative_count += std::signbit(v);
  }
  EXPECT_NEAR(static_cast<double>(z), 20000.0, 1000.0);
  EXPECT_NEAR(static_cast<double>(inf), 2000.0, 300.0);
  EXPECT_NEAR(static_cast<double>(negative_count), 100000.0, 1500.0);

  const std::vector<float> tied = ties(5000, 4, -0.5f, {4999, 17, 2500, 9999});
  EXPECT_EQ(std::count(tied.begin(), tied.end(), -0.5f), 3);
  for (std::size_t i = 0; i < tied.size(); ++i) {
    if (i != 17 && i != 2500 && i != 4999) ASSERT_LT(tied[i], -0.5f) << i;
  }

  std::vector<float> x(10, 1.0f);
  place(x, {0, 9, 10, 1000}, kNaN);
  EXPECT_TRUE(std::isnan(x[0]) && std::isnan(x[9]));
  EXPECT_EQ(std::count_if(x.begin(), x.end(), [](float v) { return std::isnan(v); }), 2);
}

}  // namespace
}  // namespace reduce
