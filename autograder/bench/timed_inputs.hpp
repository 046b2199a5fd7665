/// \file
/// \brief The graded benchmark's inputs: made anew, whole, before every call of a graded lab.
///
/// A graded row (a student's lab, timed through its runner) reads inputs that the benchmark
/// makes again before every request, warm-ups included: every element of every input comes
/// from a fresh 64-bit seed through a counter-based hash of (seed, index). That seed and every
/// random choice of the input (draw_recipe(): the extreme value, its 1 to 4 places, the factors'
/// places, the mirror, lab 18's trap and its side) come from the benchmark's keyed stream
/// (BenchSession::graded_rng(), session.cuh: SipHash-2-4 in counter mode, reduce/keyed_hash.hpp)
/// under the benchmark's key, its REDUCE_SEED, which the grader derives from its secret apart
/// from every test's keys (reduce::benchmark_key()) and which no runner sees. Inverting the hash of
/// one input gives that input's seed at most: no other input, no answer, not the key. So no answer
/// can be known before the input is read: not the sum, not the extreme or where it first occurs,
/// not the product's sign, not lab 18's sums, which depend on pairs placed at random across the
/// whole input.
///
/// An input is a Recipe (drawn on the host, a few hundred bytes) and element_at(recipe, i), a
/// pure function that the GPU evaluates in one memory-bound pass (regenerate(), timed_inputs.cu)
/// and the host evaluates the same way (materialize(), for tests). The pass also adds up a Tally:
/// what the expected result needs beyond the recipe (an exact integer sum, a count of negative
/// factors, the sum of magnitudes), in integers where exactness matters. expected_result() then
/// makes the answer from recipe and tally; finishing_writes() says what to write afterwards (lab
/// 18's rounding trap, which depends on the tally).
///
/// What each answer's content keeps exact or checkable:
///  - sum, mean: integers whose magnitudes add up to at most 2^24, so every partial sum in any
///    order is exact in float: +-1..8 everywhere (n <= 2^21), +-1 everywhere (n <= 2^24), else
///    one +-1 at a random place in each run of 2^k elements (at most 2^23 runs), zeros
///    elsewhere. The sum is a random walk: no two regenerations agree but by chance.
///  - maximum, minimum, argmax: a random extreme value T (random sign, mantissa and binade
///    2^-8..2^8) at 1 to 4 random places (ties: argmax is the first), everything else uniform
///    in [T - 2^(e+1), T), strictly below T (minimum: all of it negated).
///  - product: +-1 with a random sign everywhere (the sign of the product is the parity of
///    about n/2 negatives), and in each of at most 64 runs a 2 and a 1/2 at random places, each
///    present or not, at most kProductExponentBudget of each: every partial product is +-2^k,
///    |k| <= 60, exact in any order.
///  - sum_compensated, sum_reproducible: element i pairs with (mirror - i) mod n, mirror random.
///    Most pairs are v, -v (v with a full 24-bit mantissa, 2^-12 <= |v| < 2^12, random sign),
///    which cancel exactly only when both are added; about 1 pair in n/1024 holds two small
///    integers +-1..8 instead. The exact sum is the small integers' sum, at places nobody knows;
///    sum |x| is some 300 n, so a float tree misses the compensated bound by far. The
///    reproducible sum's input also has its rounding trap (make_trap()) in one random pair.
#pragma once

#include <reduce/generators.hpp>
#include <reduce/keyed_hash.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::timed {

/// What a graded row computes, and so what its inputs hold.
enum class Answer : int {
  kSum,
  kMean,
  kMaximum,
  kMinimum,
  kArgmax,
  kProduct,
  kCompensatedSum,
  kReproducibleSum,
};

/// The kinds of content (several answers share one).
enum class Content : int { kIntegers, kExtreme, kFactors, kCancelling };

/// What is known of an answer beside its rules: the operation it belongs to and its content.
struct AnswerTraits {
  Answer answer;
  const char* name;  ///< the operation's name (the catalogue's entry point, the benchmark row's)
  Content content;   ///< what its inputs hold
};

/// One row per answer, in the enum's order (checked below). A benchmark operation finds its
/// answer here by its name (answer_named()).
inline constexpr AnswerTraits kAnswers[] = {
    {Answer::kSum, "sum", Content::kIntegers},
    {Answer::kMean, "mean", Content::kIntegers},
    {Answer::kMaximum, "maximum", Content::kExtreme},
    {Answer::kMinimum, "minimum", Content::kExtreme},
    {Answer::kArgmax, "argmax", Content::kExtreme},
    {Answer::kProduct, "product", Content::kFactors},
    {Answer::kCompensatedSum, "sum_compensated", Content::kCancelling},
    {Answer::kReproducibleSum, "sum_reproducible", Content::kCancelling},
};

/// Whether kAnswers lists every answer once, in the enum's order.
constexpr bool answers_in_order() {
  int i = 0;
  for (const AnswerTraits& row : kAnswers)
    if (static_cast<int>(row.answer) != i++) return false;
  return i == static_cast<int>(Answer::kReproducibleSum) + 1;
}
static_assert(answers_in_order(), "kAnswers must list every Answer once, in the enum's order");

/// \p answer's row of kAnswers; throws std::logic_error for an answer added to the enum without
/// a row (the order check above cannot see a missing last row).
constexpr const AnswerTraits& traits_of(Answer answer) {
  for (const AnswerTraits& row : kAnswers)
    if (row.answer == answer) return row;
  throw std::logic_error("kAnswers (timed_inputs.hpp) has no row for an answer");
}

inline constexpr int kMaxTies = 4;         ///< places of the extreme value
inline constexpr int kMaxFactorRuns = 64;  ///< runs of the product's input, one 2 and one 1/2 each
inline constexpr std::size_t kNowhere = ~std::size_t{0};  ///< a place no element has
/// About how many small integers lab 18's input holds (as reduce::kCancellingSmall).
inline constexpr std::size_t kSmallIntegers = 1024;

/// Everything element_at() needs besides the index: one input, drawn by draw_recipe(). Plain
/// data, passed to the kernel by value.
struct Recipe {
  Content content = Content::kIntegers;
  std::uint64_t seed = 0;  ///< the hash's key: fresh for every regeneration
  std::size_t n = 0;
  // kIntegers, kFactors
  unsigned run_shift = 0;  ///< runs of 2^run_shift elements (kIntegers: 0 = every element)
  int magnitude = 1;       ///< kIntegers with run_shift 0: values +-1..magnitude (1 or 8)
  // kExtreme
  float top = 0;   ///< the extreme value before `sign` (the largest)
  float low = 0;   ///< the rest is uniform in [low, top)
  float sign = 1;  ///< -1: every element negated (the minimum's input)
  std::size_t ties[kMaxTies] = {kNowhere, kNowhere, kNowhere, kNowhere};
  // kFactors: run j holds a 2 at twos[j] and a 1/2 at halves[j] (kNowhere: none)
  std::size_t twos[kMaxFactorRuns] = {};
  std::size_t halves[kMaxFactorRuns] = {};
  // kCancelling
  std::size_t mirror = 0;           ///< element i pairs with (mirror - i) mod n
  std::uint64_t small_below = 0;    ///< a pair is small when the top 32 bits of its hash are below
  std::size_t reserved = kNowhere;  ///< the lower place of the pair the trap takes (made 0 here)
  bool trap_toward_zero = false;    ///< make_trap()'s direction
  bool trap_half_first = false;     ///< the trap's half-ulp goes to the lower place of its pair
};

/// One element and what it adds to the exact integer tally: the value (kIntegers), a small
/// integer (kCancelling; 0 for a cancelling pair), 1 for a negative factor (kFactors).
struct Element {
  float value;
  std::int32_t integer;
};

/// What the pass over an input adds up besides writing it.
struct Tally {
  std::int64_t integers = 0;  ///< sum of Element::integer, exactly
  double magnitudes = 0;      ///< sum of |value| (kCancelling only; in double)
};

/// The partner of \p i in a kCancelling input: (mirror - i) mod n.
REDUCE_HOST_DEVICE inline std::size_t partner_of(const Recipe& r, std::size_t i) noexcept {
  return r.mirror >= i ? r.mirror - i : r.mirror + r.n - i;
}

/// A small integer +-1..8 from four bits of \p bits.
REDUCE_HOST_DEVICE inline std::int32_t small_integer(std::uint64_t bits) noexcept {
  const auto magnitude = static_cast<std::int32_t>(1 + (bits & 7));
  return (bits & 8) != 0 ? -magnitude : magnitude;
}

/// Uniform in [low, top) from the hash of (seed, i): reduce::uniform_at() with its one multiply
/// and add fused explicitly, so that the device (which would fuse them anyway) and the host twin
/// give the same bits.
REDUCE_HOST_DEVICE inline float uniform_below(std::uint64_t seed, std::size_t i, float low,
                                              float top) noexcept {
  const double unit = static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53;  // [0, 1), exact
  const auto v =
      static_cast<float>(fma(static_cast<double>(top) - low, unit, static_cast<double>(low)));
  const float below = float_below(top);  // top stays excluded after rounding
  return below < v ? below : v;
}

/// Element \p i of a kIntegers input in runs (r.run_shift > 0), from its run's hash
/// \p h = mix(r.seed, i >> r.run_shift): one +-1 at the place the hash picks, zeros elsewhere.
/// Apart so that a pass may hash a run once for several of its elements.
REDUCE_HOST_DEVICE inline Element run_element(const Recipe& r, std::uint64_t h,
                                              std::size_t i) noexcept {
  const std::uint64_t mask = (std::uint64_t{1} << r.run_shift) - 1;
  if ((i & mask) != (h & mask)) return {0.0f, 0};
  return ((h >> 40) & 1) != 0 ? Element{-1.0f, -1} : Element{1.0f, 1};
}

/// Element \p i (< r.n) of the input \p r describes.
REDUCE_HOST_DEVICE inline Element element_at(const Recipe& r, std::size_t i) noexcept {
  switch (r.content) {
    case Content::kIntegers: {
      if (r.run_shift == 0) {
        const std::uint64_t h = mix(r.seed, i);
        const auto magnitude = static_cast<std::int32_t>(r.magnitude == 8 ? 1 + (h & 7) : 1);
        const std::int32_t v = ((h >> 8) & 1) != 0 ? -magnitude : magnitude;
        return {static_cast<float>(v), v};
      }
      return run_element(r, mix(r.seed, i >> r.run_shift), i);
    }
    case Content::kExtreme: {
      bool tie = false;
      for (int k = 0; k < kMaxTies; ++k) tie = tie || i == r.ties[k];
      const float v = tie ? r.top : uniform_below(r.seed, i, r.low, r.top);
      return {r.sign < 0 ? -v : v, 0};
    }
    case Content::kFactors: {
      const std::size_t run = i >> r.run_shift;
      const float m = i == r.twos[run] ? 2.0f : i == r.halves[run] ? 0.5f : 1.0f;
      const bool negative = (mix(r.seed, i) & 1) != 0;
      return {negative ? -m : m, negative ? 1 : 0};
    }
    case Content::kCancelling: {
      const std::size_t other = partner_of(r, i);
      const std::size_t lower = other < i ? other : i;
      if (lower == r.reserved) return {0.0f, 0};
      const std::uint64_t h = mix(r.seed, lower);
      if (other == i || (h >> 32) < r.small_below) {  // two small integers (or one, alone)
        const std::int32_t v = small_integer(i == lower ? h : h >> 4);
        return {static_cast<float>(v), v};
      }
      const auto mantissa = static_cast<float>((h & 0x7FFFFFu) | 0x800000u);  // [2^23, 2^24)
      const int exponent =
          static_cast<int>((static_cast<std::uint32_t>(h >> 23) & 0x1FFu) % 24u) - 12 - 23;
      float v = ldexpf(mantissa, exponent);
      if (((h >> 32) & 1) != 0) v = -v;
      return {i == lower ? v : -v, 0};
    }
  }
  return {0.0f, 0};
}

// ---- host side ---------------------------------------------------------------------------------

/// The answer of the operation named \p name; throws std::invalid_argument if kAnswers has none.
Answer answer_named(const std::string& name);

/// A fresh input for \p answer at size \p n: its seed and every random choice come from \p rng.
Recipe draw_recipe(Answer answer, std::size_t n, KeyedStream& rng);

/// What a correct call returns for one input.
struct Expected {
  double value = 0;      ///< the result (argmax: the index)
  double tolerance = 0;  ///< the compensated sum: how far from value a result may be (its bound)
  double integers = 0;   ///< lab 18: the small integers' sum (the reproducible sum's S)
};

/// A value the benchmark writes into the input after the pass (lab 18's trap).
struct Write {
  std::size_t at;
  float value;
};

/// Lab 18's rounding trap beside an integer sum S: the exact sum is S + half + tiny, where half
/// is half the gap from |S| to its neighbour (away from zero, or towards it), so that S + half
/// is a tie, and tiny = +-2^-100 pulls the exact sum to the neighbour that rounding the tie
/// (to even) does not give. A double accumulator loses tiny (2^-100 beside S) and rounds the
/// tie: it is wrong every time. S = 0 has no tie: half = 1, tiny = 0.
struct Trap {
  float half = 0, tiny = 0;
  float expected = 0;  ///< S + half + tiny rounded once (ExactSum)
};
Trap make_trap(std::int64_t integers, bool toward_zero);

/// What to write into the input once its tally is known (lab 18's trap: two values; otherwise
/// nothing).
std::vector<Write> finishing_writes(Answer answer, const Recipe& r, const Tally& t);

/// The expected result of \p answer on the input of \p r, whose pass added up \p t (the
/// finishing writes included).
Expected expected_result(Answer answer, const Recipe& r, const Tally& t);

/// The input on the host, element_at() for every place, then the finishing writes: what
/// regenerate() and the benchmark make on the device (for tests).
std::vector<float> materialize(Answer answer, const Recipe& r, const Tally& t);

/// The pass's tally computed on the host (for tests).
Tally tally_on_host(const Recipe& r);

// ---- device side (timed_inputs.cu) -------------------------------------------------------------

/// Writes element_at(r, i) to x[i] for every i < r.n in one pass on \p stream, and adds the
/// pass's Tally to \p *tally (device memory, zeroed by the caller). Asynchronous.
void regenerate(float* x, const Recipe& r, Tally* tally, cudaStream_t stream);

}  // namespace reduce::timed
