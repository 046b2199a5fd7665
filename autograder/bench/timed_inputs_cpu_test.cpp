// The graded benchmark's inputs on the host (no GPU): the recipes, the host twin of the GPU pass
// (element_at, tally_on_host, materialize), the expected results and lab 18's rounding trap.
#include "timed_inputs.hpp"
#include "timed_inputs_checks.hpp"

#include <reduce/exact_sum.hpp>
#include <reduce/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using reduce::timed::Answer;
using reduce::timed::Content;
using reduce::timed::Expected;
using reduce::timed::Recipe;
using reduce::timed::Tally;
using reduce::timed::testing::all_answers;
using reduce::timed::testing::brute_force;

static_assert(std::is_trivially_copyable_v<Recipe>, "the kernel takes a Recipe by value");
static_assert(std::is_trivially_copyable_v<Tally>, "tallies are copied back from the device");

/// One input as the benchmark makes it: recipe, pass, finishing writes, expected result.
struct Made {
  Recipe recipe;
  Tally tally;
  std::vector<float> x;
  Expected expected;
};

Made make(Answer answer, std::size_t n, reduce::KeyedStream& rng) {
  Made m;
  m.recipe = reduce::timed::draw_recipe(answer, n, rng);
  m.tally = reduce::timed::tally_on_host(m.recipe);
  m.x = reduce::timed::materialize(answer, m.recipe, m.tally);
  m.expected = reduce::timed::expected_result(answer, m.recipe, m.tally);
  return m;
}

std::string name_of(Answer answer) {
  return reduce::timed::traits_of(answer).name;
}

// A benchmark operation finds its graded inputs by its name; one without a row is refused.
TEST(AnswerNames, EveryAnswerIsFoundByItsOperationsName) {
  for (const reduce::timed::AnswerTraits& row : reduce::timed::kAnswers)
    EXPECT_EQ(reduce::timed::answer_named(row.name), row.answer) << row.name;
  EXPECT_THROW(reduce::timed::answer_named("segmented_sum"), std::invalid_argument);
  EXPECT_THROW(reduce::timed::answer_named(""), std::invalid_argument);
}

// ---- every answer at every size: the expected result is the input's own ----------------------

class EveryAnswer : public ::testing::TestWithParam<std::tuple<Answer, std::size_t>> {};

TEST_P(EveryAnswer, ExpectedResultIsWhatTheInputHolds) {
  const auto [answer, n] = GetParam();
  reduce::KeyedStream rng(n * 131 + static_cast<int>(answer));
  for (int draw = 0; draw < 3; ++draw) {
    const Made m = make(answer, n, rng);
    ASSERT_EQ(m.x.size(), n);
    EXPECT_EQ(brute_force(answer, m.x), m.expected.value) << "draw " << draw;
    if (answer == Answer::kCompensatedSum) {
      EXPECT_GT(m.expected.tolerance, 0.0);
      EXPECT_LT(m.expected.tolerance, 0.5) << "the bound must still tell the integer sum apart";
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Answer, std::size_t>>& info) {
  return name_of(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param));
}

/// The answers of all_answers(), without their names.
std::vector<Answer> every_answer() {
  std::vector<Answer> answers;
  for (const auto& [answer, name] : all_answers()) answers.push_back(answer);
  return answers;
}

INSTANTIATE_TEST_SUITE_P(Sizes, EveryAnswer,
                         ::testing::Combine(::testing::ValuesIn(every_answer()),
                                            ::testing::Values(1, 2, 3, 4, 5, 31, 1000, 1024, 1025,
                                                              4097, 100003)),
                         case_name);

// ---- nothing follows from an earlier call ------------------------------------------------------

TEST(Regeneration, EveryDrawChangesTheAnswerAndTheWholeInput) {
  constexpr int kDraws = 40;
  const std::size_t n = 4097;
  for (const auto& [answer, name] : all_answers()) {
    reduce::KeyedStream rng(7);
    std::set<double> answers;
    Made previous = make(answer, n, rng);
    answers.insert(previous.expected.value);
    double least_changed = 1.0;
    for (int draw = 1; draw < kDraws; ++draw) {
      Made m = make(answer, n, rng);
      answers.insert(m.expected.value);
      std::size_t changed = 0;
      for (std::size_t i = 0; i < n; ++i) changed += m.x[i] != previous.x[i];
      least_changed = std::min(least_changed, static_cast<double>(changed) / n);
      previous = std::move(m);
    }
    // The product is +-2^k, k a difference of two counts of coin flips: fewer values to take.
    const std::size_t fewest = answer == Answer::kProduct ? 8 : kDraws * 3 / 4;
    EXPECT_GE(answers.size(), fewest) << name;
    // +-1 factors keep their value half of the time; every other content far less often.
    EXPECT_GT(least_changed, answer == Answer::kProduct ? 0.4 : 0.8) << name;
  }
}

TEST(Regeneration, TheSameGeneratorMakesTheSameInputs) {
  for (const auto& [answer, name] : all_answers()) {
    reduce::KeyedStream a(99), b(99);
    EXPECT_EQ(make(answer, 1000, a).x, make(answer, 1000, b).x) << name;
  }
}

// ---- sum and mean: exact in any order
// ------------------------------------------------------------

class IntegerContent : public ::testing::TestWithParam<std::size_t> {};

TEST_P(IntegerContent, EveryOrderGivesTheExactSum) {
  const std::size_t n = GetParam();
  reduce::KeyedStream rng(n);
  const Made m = make(Answer::kSum, n, rng);
  EXPECT_LE(reduce::absolute_sum(m.x), 16777216.0);  // 2^24: every partial sum exact in float
  float forward = 0, backward = 0;
  for (std::size_t i = 0; i < n; ++i) forward += m.x[i];
  for (std::size_t i = n; i-- > 0;) backward += m.x[i];
  EXPECT_EQ(forward, m.expected.value);
  EXPECT_EQ(backward, m.expected.value);
  EXPECT_EQ(static_cast<double>(m.tally.integers), m.expected.value);
  if (m.recipe.run_shift > 0) {  // at most one nonzero, +-1, per run
    const std::size_t run = std::size_t{1} << m.recipe.run_shift;
    for (std::size_t first = 0; first < n; first += run) {
      int nonzero = 0;
      for (std::size_t i = first; i < std::min(n, first + run); ++i) {
        nonzero += m.x[i] != 0.0f;
        ASSERT_TRUE(m.x[i] == 0.0f || std::fabs(m.x[i]) == 1.0f);
      }
      ASSERT_LE(nonzero, 1) << "run at " << first;
    }
  }
}

// 2^21 + 3: +-1 everywhere; 2^24 + 5 and 2^25 - 3: one +-1 per run of 2 and 4.
INSTANTIATE_TEST_SUITE_P(Sizes, IntegerContent,
                         ::testing::Values(100003, (std::size_t{1} << 21) + 3,
                                           (std::size_t{1} << 24) + 5, (std::size_t{1} << 25) - 3));

// ---- maximum, minimum, argmax: one value above all the others ---------------------------------

TEST(ExtremeContent, TheExtremeIsAtItsTiesAndEverythingElseIsBelow) {
  reduce::KeyedStream rng(3);
  std::set<int> binades;
  for (int draw = 0; draw < 50; ++draw) {
    const std::size_t n = 1000 + draw * 37;
    const Made m = make(Answer::kMaximum, n, rng);
    const float top = m.recipe.top;
    std::set<std::size_t> ties(std::begin(m.recipe.ties), std::end(m.recipe.ties));
    ties.erase(reduce::timed::kNowhere);
    ASSERT_GE(ties.size(), 1u);
    for (std::size_t i = 0; i < n; ++i) {
      if (ties.count(i) != 0)
        ASSERT_EQ(m.x[i], top) << i;
      else
        ASSERT_LT(m.x[i], top) << i;
    }
    binades.insert(std::ilogb(top));
  }
  EXPECT_GE(binades.size(), 8u) << "the extreme's binade is drawn too";
}

TEST(ExtremeContent, UniformBelowIsUniformAtFused) {
  // The same draw as reduce::uniform_at() but for its one rounding: at most an ulp apart, and
  // never at or above top.
  for (const auto& [low, top] : {std::pair{-1.0f, 1.0f}, std::pair{-3.0f, 1.5f},
                                 std::pair{-0.75f, -0.25f}, std::pair{1000.0f, 1000.5f}}) {
    for (std::size_t i = 0; i < 100000; ++i) {
      const float fused = reduce::timed::uniform_below(77, i, low, top);
      const float plain = reduce::uniform_at(77, i, low, top);
      ASSERT_LT(fused, top);
      ASSERT_GE(fused, low);
      ASSERT_LE(std::fabs(fused - plain), std::fabs(std::nextafter(plain, top) - plain)) << i;
    }
  }
}

TEST(ExtremeContent, TheMinimumIsTheMaximumsInputNegated) {
  reduce::KeyedStream a(5), b(5);
  const Made max = make(Answer::kMaximum, 3000, a);
  const Made min = make(Answer::kMinimum, 3000, b);
  for (std::size_t i = 0; i < max.x.size(); ++i) ASSERT_EQ(min.x[i], -max.x[i]);
  EXPECT_EQ(min.expected.value, -max.expected.value);
}

TEST(ExtremeContent, TheExtremeHasEitherSign) {
  reduce::KeyedStream rng(11);
  int negative = 0;
  for (int draw = 0; draw < 40; ++draw)
    negative += make(Answer::kMaximum, 100, rng).expected.value < 0;
  EXPECT_GT(negative, 5);
  EXPECT_LT(negative, 35);
}

// ---- product: +-2^k, exact in any order --------------------------------------------------------

TEST(FactorContent, WithinTheExponentBudgetAndExactInFloat) {
  reduce::KeyedStream rng(13);
  for (std::size_t n : {std::size_t{1}, std::size_t{64}, std::size_t{65}, std::size_t{100003},
                        (std::size_t{1} << 20) + 7}) {
    const Made m = make(Answer::kProduct, n, rng);
    std::size_t twos = 0, halves = 0;
    for (float v : m.x) {
      twos += std::fabs(v) == 2.0f;
      halves += std::fabs(v) == 0.5f;
      ASSERT_TRUE(std::fabs(v) == 1.0f || std::fabs(v) == 2.0f || std::fabs(v) == 0.5f);
    }
    EXPECT_LE(twos, reduce::kProductExponentBudget);
    EXPECT_LE(halves, reduce::kProductExponentBudget);
    float forward = 1.0f;
    for (float v : m.x) forward *= v;
    EXPECT_EQ(forward, m.expected.value) << "n = " << n;
  }
}

// ---- lab 18: ill-conditioned, the trap in a random pair ----------------------------------------

/// A float tree over x[lo, hi), halves of equal size: the best order a float sum can have.
float pairwise(const std::vector<float>& x, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return x[lo];
  const std::size_t mid = lo + (hi - lo) / 2;
  return pairwise(x, lo, mid) + pairwise(x, mid, hi);
}

TEST(CancellingContent, DefeatsAFloatTreeButNotTheCompensatedBound) {
  const std::size_t n = (std::size_t{1} << 20) + 7;
  reduce::KeyedStream rng(18);  // with 17 the pairwise tree happens to be exact
  const Made m = make(Answer::kCompensatedSum, n, rng);
  const double exact = m.expected.value;
  EXPECT_GT(std::fabs(pairwise(m.x, 0, n) - exact), 10 * m.expected.tolerance);
  EXPECT_GT(std::fabs(reduce::serial_float_sum(m.x.data(), n) - exact), 10 * m.expected.tolerance);
  double in_double = 0;
  for (float v : m.x) in_double += v;
  EXPECT_LE(std::fabs(static_cast<float>(in_double) - exact), m.expected.tolerance);
  // The bound is made from the pass's sum of magnitudes: the input's own.
  EXPECT_NEAR(m.tally.magnitudes, reduce::absolute_sum(m.x), 1e-9 * m.tally.magnitudes);
  EXPECT_GT(m.tally.magnitudes, 100.0 * n) << "ill-conditioned: sum |x| far above |sum|";
}

TEST(CancellingContent, PairsCancelAndTheSmallIntegersAreSpreadOut) {
  const std::size_t n = 200003;
  reduce::KeyedStream rng(19);
  const Made m = make(Answer::kCompensatedSum, n, rng);
  std::size_t small = 0, first_small = n, last_small = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t other = reduce::timed::partner_of(m.recipe, i);
    ASSERT_EQ(reduce::timed::partner_of(m.recipe, other), i) << "pairing is an involution";
    const float v = m.x[i];
    if (v == std::round(v) && std::fabs(v) >= 1 && std::fabs(v) <= 8 &&
        (other == i || m.x[other] != -v)) {
      ++small;
      first_small = std::min(first_small, i);
      last_small = std::max(last_small, i);
    } else if (other != i) {
      ASSERT_EQ(m.x[other], -v) << i;
    }
  }
  EXPECT_GT(small, 700u);
  EXPECT_LT(small, 1400u);
  EXPECT_LT(first_small, n / 100) << "the integers lie across the whole input";
  EXPECT_GT(last_small, n - n / 100);
}

TEST(CancellingContent, TheReproducibleSumsTrapDefeatsADoubleAccumulator) {
  // A double accumulator drops the trap's tiny term and rounds what is left: the tie, moved by
  // its own rounding errors on the cancelling pairs (about 2^-40 here) to either side at random.
  // So it misses the exact sum about every other call: a row of many calls never passes.
  reduce::KeyedStream rng(23);
  int trapped = 0, missed = 0;
  std::set<std::size_t> places;
  for (int draw = 0; draw < 20; ++draw) {
    const std::size_t n = 100003;
    const Made m = make(Answer::kReproducibleSum, n, rng);
    ASSERT_NE(m.recipe.reserved, reduce::timed::kNowhere);
    places.insert(m.recipe.reserved);
    double in_double = 0;
    for (float v : m.x) in_double += v;
    if (m.tally.integers != 0) {
      ++trapped;
      missed += static_cast<float>(in_double) != m.expected.value;
    }
    // The integers' sum beside the trap is the expected result's S.
    EXPECT_EQ(m.expected.integers, static_cast<double>(m.tally.integers));
  }
  EXPECT_GE(trapped, 18);
  EXPECT_GE(missed, 5);
  EXPECT_GE(places.size(), 18u) << "the trap's pair is drawn anew";
}

// ---- the trap itself ----------------------------------------------------------------------------

TEST(Trap, IsATieThatTheTinyTermBreaksTheOtherWay) {
  std::vector<std::int64_t> sums;
  for (std::int64_t s = -2100; s <= 2100; ++s) sums.push_back(s);
  for (int k = 0; k < 24; ++k) {
    const std::int64_t p = std::int64_t{1} << k;
    for (std::int64_t s : {p, p - 1, p + 1, -p, -p + 1, -p - 1})
      if (std::llabs(s) < (std::int64_t{1} << 24)) sums.push_back(s);
  }
  for (std::int64_t s : sums) {
    for (bool toward_zero : {false, true}) {
      const reduce::timed::Trap trap = reduce::timed::make_trap(s, toward_zero);
      const auto f = static_cast<float>(s);
      reduce::ExactSum exact;
      for (float v : {f, trap.half, trap.tiny}) exact.add(v);
      ASSERT_EQ(exact.to_float(), trap.expected) << s;
      if (s == 0) {
        EXPECT_EQ(trap.expected, 1.0f);
        continue;
      }
      // The result is S or its neighbour on the chosen side, and nothing that drops the tiny
      // term finds it: a double accumulator in any order, or a float one.
      const float neighbour = std::nextafter(f, toward_zero ? 0.0f : std::copysign(INFINITY, f));
      ASSERT_TRUE(trap.expected == f || trap.expected == neighbour) << s;
      ASSERT_EQ(std::fabs(trap.tiny), 0x1.0p-100f);
      const double h = trap.half, t = trap.tiny, d = static_cast<double>(s);
      for (double in_double : {d + h + t, d + t + h, h + t + d, (h + d) + t})
        ASSERT_NE(static_cast<float>(in_double), trap.expected)
            << s << (toward_zero ? " in" : " out");
      ASSERT_NE((f + trap.half) + trap.tiny, trap.expected) << s;
    }
  }
}

TEST(Trap, BothDirectionsAndBothPlacesAreDrawn) {
  reduce::KeyedStream rng(29);
  int toward = 0, half_first = 0;
  for (int draw = 0; draw < 64; ++draw) {
    const Recipe r = reduce::timed::draw_recipe(Answer::kReproducibleSum, 1000, rng);
    toward += r.trap_toward_zero;
    half_first += r.trap_half_first;
  }
  EXPECT_GT(toward, 10);
  EXPECT_LT(toward, 54);
  EXPECT_GT(half_first, 10);
  EXPECT_LT(half_first, 54);
}

TEST(Trap, OnlyTheReproducibleSumWritesAfterThePass) {
  reduce::KeyedStream rng(31);
  for (const auto& [answer, name] : all_answers()) {
    const Recipe r = reduce::timed::draw_recipe(answer, 1000, rng);
    const auto writes = reduce::timed::finishing_writes(answer, r, reduce::timed::tally_on_host(r));
    EXPECT_EQ(writes.size(), answer == Answer::kReproducibleSum ? 2u : 0u) << name;
  }
}

}  // namespace
