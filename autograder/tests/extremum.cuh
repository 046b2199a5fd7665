/// \file
/// \brief What the maximum and minimum suites share, public (extremum_suite.cuh) and hidden
/// (autograder/hidden/extremum_hidden_suite.cuh): the operation's traits, mirror(), and the
/// bitwise comparison with its diagnosis. Define REDUCE_EXTREMUM_MAXIMUM or
/// REDUCE_EXTREMUM_MINIMUM before the include.
///
/// The minimum is the maximum's mirror image: negation maps one onto the other exactly, bit for
/// bit (min(x) == -max(-x), signed zeros and infinities included). So every input and expected
/// value of the suites is written for the maximum and passed through mirror(), which negates it for
/// the minimum and leaves it alone for the maximum. A NaN is kept as it is (a NaN result matches
/// any NaN, and negative_nan must stay a NaN with its sign bit set). Random inputs of either sign
/// are symmetric already and go to both operations unchanged.
#pragma once

#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#if defined(REDUCE_EXTREMUM_MAXIMUM) == defined(REDUCE_EXTREMUM_MINIMUM)
#error "define one of REDUCE_EXTREMUM_MAXIMUM and REDUCE_EXTREMUM_MINIMUM before the include"
#endif

/// The maximum's or the minimum's spelling of a name. Test names are identifiers, which only the
/// preprocessor can choose, and each operation keeps the names its planted cases and rubric use.
#ifdef REDUCE_EXTREMUM_MAXIMUM
#define REDUCE_EXTREMUM_PICK(maximum_name, minimum_name) maximum_name
#else
#define REDUCE_EXTREMUM_PICK(maximum_name, minimum_name) minimum_name
#endif

/// INSTANTIATE_TEST_SUITE_P pastes its suite name with ##, which would leave a
/// REDUCE_EXTREMUM_PICK(...) unexpanded: this extra level expands it first.
#define REDUCE_EXTREMUM_INSTANTIATE(prefix, suite, ...) \
  INSTANTIATE_TEST_SUITE_P(prefix, suite, __VA_ARGS__)

namespace reduce::testing {
namespace {

/// What the suite needs to know about the maximum: the lab's entry point and workspace size,
/// the CPU reference, the identity, and the words its messages use.
struct MaximumTraits {
  static constexpr bool kMirrored = false;  ///< the inputs below are the maximum's as written
  static constexpr float kIdentity = -kInf;
  // Words of the messages: "the maximum of", "the identity of max", "the largest element",
  // "larger than", "Too small" (the largest element missed), "Every element is negative".
  static constexpr const char* kName = "maximum";
  static constexpr const char* kOp = "max";
  static constexpr const char* kLargest = "largest";
  static constexpr const char* kLarger = "larger";
  static constexpr const char* kSmall = "small";
  static constexpr const char* kNegative = "negative";
  /// The comparisons that drop a NaN.
  static constexpr const char* kNanDroppers = "`a > b ? a : b` or fmaxf()";
  /// Where a reduction can start from 0 (lab 14's maximum also memsets its output for atomics).
  static constexpr const char* kZeroStarts =
      "in an accumulator, in the lanes beyond the block's warps, or in an output memset to 0 "
      "before atomics";

  /// The lab's entry points.
  static FloatLab lab() { return FloatLab{&maximum_workspace_bytes, &maximum}; }
  /// The CPU reference.
  static float reference(const std::vector<float>& x) { return reference_maximum(x); }
  /// The CPU reference over value_at(0), ..., value_at(n - 1), an input generated on the GPU.
  template <typename ValueAt>
  static float streamed(std::size_t n, const ValueAt& value_at) {
    return streamed_maximum(n, value_at);
  }
};

/// The same for the minimum: every word is the mirror image of the maximum's.
struct MinimumTraits {
  static constexpr bool kMirrored = true;  ///< the inputs below are negated for the minimum
  static constexpr float kIdentity = kInf;
  static constexpr const char* kName = "minimum";
  static constexpr const char* kOp = "min";
  static constexpr const char* kLargest = "smallest";
  static constexpr const char* kLarger = "smaller";
  static constexpr const char* kSmall = "large";
  static constexpr const char* kNegative = "positive";
  static constexpr const char* kNanDroppers = "`a < b ? a : b` or fminf()";
  /// No atomics: no lab computes the minimum with them.
  static constexpr const char* kZeroStarts =
      "in an accumulator or in the lanes beyond the block's warps";

  static FloatLab lab() { return FloatLab{&minimum_workspace_bytes, &minimum}; }
  static float reference(const std::vector<float>& x) { return reference_minimum(x); }
  template <typename ValueAt>
  static float streamed(std::size_t n, const ValueAt& value_at) {
    return streamed_minimum(n, value_at);
  }
};

/// The operation this binary tests.
using Traits = REDUCE_EXTREMUM_PICK(MaximumTraits, MinimumTraits);

/// \p v as this operation's suite uses it: -v for the minimum (exact, signed zeros and
/// infinities included), \p v itself for the maximum; a NaN unchanged for both.
float mirror(float v) {
  return Traits::kMirrored && !std::isnan(v) ? -v : v;
}

/// mirror() of every element.
std::vector<float> mirror(std::vector<float> x) {
  for (float& v : x) v = mirror(v);
  return x;
}

/// A value as the messages write it, with the sign that mirror() gave it: "+0.0", "-inf", ...
std::string spell(float v) {
  if (v == 0.0f) return std::signbit(v) ? "-0.0" : "+0.0";
  if (std::isinf(v)) return v < 0.0f ? "-inf" : "+inf";
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(v));
  return text;
}

/// What a wrong result most likely means, for the message a student sees.
std::string diagnose(float got, float want) {
  const std::string name = Traits::kName, op = Traits::kOp;
  if (std::isnan(want) && !std::isnan(got)) {
    return "A NaN anywhere must make the " + name + " NaN (IEEE 754-2019, numpy, torch). A " + op +
           " written as " + Traits::kNanDroppers +
           " drops a NaN whenever it is the second operand.";
  }
  if (!std::isnan(want) && std::isnan(got)) {
    return "NaN with no NaN in the input: the output (poisoned with 0xFF bytes, a NaN) was "
           "never written, or a poisoned workspace value was read.";
  }
  if (got == 0.0f && mirror(want) < 0.0f) {
    return "Every element is " + std::string(Traits::kNegative) +
           ": a result of 0 means the reduction started from 0 instead of " +
           spell(Traits::kIdentity) + " (the identity of " + op + "): " + Traits::kZeroStarts + ".";
  }
  if (got == want && bits(got) != bits(want)) {
    const std::string winner = spell(mirror(0.0f)), loser = spell(mirror(-0.0f));
    return "Right value, wrong zero: " + winner + " is " + Traits::kLarger + " than " + loser +
           ", so the " + name + " of {" + loser + ", " + winner + "} is " + winner +
           " in any order. A " + op +
           " that keeps the first of two equal values returns whichever zero it met first.";
  }
  if (mirror(got) < mirror(want)) {
    return "Too " + std::string(Traits::kSmall) + ": the " + Traits::kLargest +
           " element was never read (check the index arithmetic, the tail of the grid-stride "
           "loop, and the partials of the second pass).";
  }
  std::string beyond = Traits::kLarger;  // starts the sentence: "Larger" or "Smaller"
  beyond[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(beyond[0])));
  return beyond + " than every element: the result comes from memory outside the input.";
}

/// Bitwise comparison (NaN matches any NaN) with a message that explains the difference.
void expect_result(float got, float want, std::size_t n) {
  if ((std::isnan(want) && std::isnan(got)) || bits(got) == bits(want)) return;
  ADD_FAILURE() << "n = " << n << ": got " << describe(got) << ", expected " << describe(want)
                << ". " << diagnose(got, want);
}

}  // namespace
}  // namespace reduce::testing
