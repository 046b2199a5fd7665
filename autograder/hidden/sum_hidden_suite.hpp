/// \file
/// \brief What every hidden suite of a mode of the sum shares: the fixture, whose entry point
/// comes at run time (lab_entry(): the checker's --lab-entry, or its plan's line), and the sizes
/// drawn from the grading secret (input_seed()). sum_hidden_test.cu's tests serve reduce::sum and
/// lab 18's sum_compensated and sum_reproducible, which add their own
/// (sum_compensated_hidden_test.cu, sum_reproducible_hidden_test.cu).
#pragma once

#include "gpu_test.hpp"

#include <reduce/generators.hpp>

#include <cstddef>
#include <cstdint>

namespace reduce::testing {

/// Every hidden test of a mode of the sum: a GPU, and the entry point under test (reduce::sum
/// unless --lab-entry names another) called through the contract runner (its output's second
/// float is a guard the lab must never write).
class HiddenSum : public FloatLabTest {
 protected:
  HiddenSum() : FloatLabTest(float_lab(lab_entry("sum"))) {}
};

/// The k-th size of this run and test: log-uniform in [1, 2^22], drawn from input_seed(), a keyed
/// hash of the grading secret and the test's name (no public input tells it).
inline std::size_t drawn_size(int k) {
  const std::uint64_t r = input_seed(0x51CE0000u, k);
  const unsigned exponent = static_cast<unsigned>(r % 22);  // [2^e, 2^(e+1)), e in 0..21
  const std::size_t low = std::size_t{1} << exponent;
  return low + static_cast<std::size_t>(mix(r, 1) % low);
}

}  // namespace reduce::testing
