/// \file
/// \brief The fixture of every public suite of a mode of the sum: sum_test.cu's tests, which
/// every mode must pass, and the tests each mode adds (sum_deterministic_test.cu,
/// sum_compensated_test.cu, sum_reproducible_test.cu). The entry point comes at run time
/// (lab_entry(): the checker's --lab-entry, or its plan's line), so the sum's suites are
/// compiled once and serve reduce::sum, reduce::sum_compensated and reduce::sum_reproducible.
#pragma once

#include "gpu_test.hpp"

namespace reduce::testing {

/// Every test of a mode of the sum: skips without a GPU, else calls the entry point under test
/// (reduce::sum unless --lab-entry names another) through the contract runner.
class SumTest : public FloatLabTest {
 protected:
  SumTest() : FloatLabTest(float_lab(lab_entry("sum"))) {}
};

}  // namespace reduce::testing
