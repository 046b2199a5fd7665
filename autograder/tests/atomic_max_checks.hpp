/// \file
/// \brief What the atomic_max suites, public and hidden, check of lab 14's atomic_max: the
/// contract's total order, the canonical NaN, and the properties every correct atomic maximum
/// has under any interleaving, with the messages that explain a failure.
#pragma once

#include "gpu_test.hpp"

#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace reduce::testing {

/// The one NaN atomic_max stores, whatever NaN it is given (the contract).
inline constexpr std::uint32_t kCanonicalNaN = 0x7FFFFFFFu;
/// A NaN with the sign bit set.
inline const float kNegativeNaN = from_bits(0xFFC00000u);
/// What atomic_max stores for any NaN.
inline const float kStoredNaN = from_bits(kCanonicalNaN);

/// What a wrong ordering of negative numbers suggests.
inline constexpr char kNegatives[] =
    "Negative floats: as integers their bits order the other way round (a larger magnitude is a "
    "larger integer but a smaller float), so a signed atomicMax on the bits keeps the most "
    "negative value. Use unsigned atomicMin on the bits when the value's sign bit is set.";
/// What a wrong signed zero suggests.
inline constexpr char kZeros[] =
    "+0.0 and -0.0 compare equal as floats, so a compare-and-swap loop that stops on `>=` keeps "
    "whichever zero came first. The contract wants +0.0 > -0.0 in either order.";
/// What a lost NaN suggests.
inline constexpr char kNaNs[] =
    "A NaN must win and stay: every comparison with NaN is false, so a compare-and-swap loop "
    "that tests `old >= value` lets the next value overwrite a stored NaN (and a NaN with its "
    "sign bit set looks like a very negative integer).";
/// What any other wrong value suggests.
inline constexpr char kOrder[] = "The maximum in float order, returning the previous value.";

/// Position of \p v in the contract's total order: -inf lowest, -0.0 below +0.0, NaN highest.
inline std::int64_t order_key(float v) {
  if (std::isnan(v)) return std::int64_t{1} << 40;
  const std::uint32_t b = bits(v);
  // Negative floats: flip the magnitude bits so that a larger magnitude ranks lower.
  const std::int32_t k = static_cast<std::int32_t>((b & 0x80000000u) ? (b ^ 0x7FFFFFFFu) : b);
  return k;
}

/// What the address holds after storing \p v: any NaN becomes the canonical NaN.
inline float stored(float v) {
  return std::isnan(v) ? kStoredNaN : v;
}

/// Equal as the contract compares stored values: bitwise, any NaN matching any NaN.
inline bool same(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b);
}

/// The message that explains a wrong final value \p want.
inline const char* why_wrong(float want) {
  return std::isnan(want) ? kNaNs : want < 0.0f ? kNegatives : want == 0.0f ? kZeros : kOrder;
}

/// Checks what any correct atomic maximum guarantees, whatever the interleaving, of calls that
/// brought \p values to an address starting at \p start, returned \p olds and left \p final:
/// the final value is the maximum of the start value and every input; every returned value is
/// the start value or an input (NaN as stored) and not above the final value; every value the
/// address held, except the last, was replaced by a call that saw it and brought a larger value.
inline void check_history(float start, const std::vector<float>& values,
                          const std::vector<float>& olds, float final) {
  const std::size_t n = values.size();
  const std::string start_text = bits(start) == bits(-kInf) ? "-inf" : describe(start);

  // 1. The final value is the maximum of the start value and every input.
  std::vector<float> all = values;
  all.push_back(start);
  const float want = stored(reference_maximum(all));
  if (!same(final, want)) {
    ADD_FAILURE() << n << " threads on one address starting at " << start_text << ": it ends as "
                  << describe(final) << ", expected " << describe(want) << ". " << why_wrong(want);
    return;
  }

  // 2. Every returned value is the start value or an input (NaN as stored), and not above the
  //    final value; neither is the value the thread brought.
  std::vector<std::uint32_t> seen;
  seen.reserve(n + 1);
  for (float v : all) seen.push_back(bits(stored(v)));
  std::sort(seen.begin(), seen.end());
  const std::int64_t top = order_key(final);
  std::unordered_set<std::uint32_t> distinct_olds;
  std::size_t reported = 0;
  for (std::size_t i = 0; i < n && reported < 5; ++i) {
    const float old = olds[i];
    distinct_olds.insert(bits(old));
    const bool known = std::binary_search(seen.begin(), seen.end(), bits(old));
    if (!known || order_key(old) > top || order_key(values[i]) > top) {
      ++reported;
      ADD_FAILURE() << "thread " << i << " (value " << describe(values[i]) << ") got back "
                    << describe(old) << " with the address ending at " << describe(final)
                    << (known ? ": above the final value"
                              : ": neither the start value nor any input")
                    << ". atomic_max must return exactly what the address held before it.";
    }
  }

  // 3. Every value the address held, except the last, was replaced by a call that saw it and
  //    brought a larger value; the last was brought by a call that saw something smaller.
  std::unordered_set<std::uint32_t> replaced;  // olds o for which some thread brought v > o
  bool final_installed = same(final, start);
  for (std::size_t i = 0; i < n; ++i) {
    if (order_key(values[i]) > order_key(olds[i])) {
      replaced.insert(bits(olds[i]));
      if (same(stored(values[i]), final)) final_installed = true;
    }
  }
  if (!final_installed) {
    ADD_FAILURE() << "no call returned a value below the final value " << describe(final)
                  << " while bringing it: the returned old values do not match the stores.";
  }
  for (std::uint32_t o : distinct_olds) {
    if (o == bits(final) || (std::isnan(from_bits(o)) && std::isnan(final))) continue;
    if (replaced.count(o) == 0) {
      ADD_FAILURE() << describe(from_bits(o)) << " was returned as an old value, but no call "
                    << "that saw it brought a larger value, yet the address ended at "
                    << describe(final)
                    << ": the returned values do not describe one sequence of atomic updates.";
    }
  }
}

/// Applies every value at once (one thread each) to an address starting at -inf and checks
/// check_history().
inline void check_concurrent(ContractRunner& runner, const std::vector<float>& values) {
  const float start = -kInf;
  float final = 0.0f;
  const std::vector<float> olds =
      runner.atomic_max(start, values, ContractRunner::kOneLaunch, &final);
  check_history(start, values, olds, final);
}

}  // namespace reduce::testing
