// Hidden tests of the mean contract: run by the grader (course_graded_test) on every lab that
// implements reduce::mean (lab 12), never shipped in the student release. They check what the
// public suite (autograder/tests/mean_test.cu) leaves to chance: prime and 3 x 2^k +- 1 sizes; long
// inputs whose n is not a float (every size of the public exact tests is one), so that dividing by
// n converted to float gives another answer than the exact mean rounded once; infinities and NaN
// (numpy: a lone inf gives inf, inf and -inf give NaN); windows of one allocation with huge
// neighbours; and a value that moves and changes while the buffer's ends stay the same.
//
// Every input's partial sums are small integers, exact in float in any order, so the expected
// mean is that sum divided by n in double and rounded once to float, compared bitwise.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <map>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

/// Every hidden test: a GPU, and reduce::mean through the contract runner.
class HiddenMean : public FloatLabTest {
 protected:
  HiddenMean() : FloatLabTest(FloatLab{&mean_workspace_bytes, &mean}) {}

  /// The lab's mean of the device input in[0..n); the output is poisoned with 0x3F bytes
  /// (0.747), not with a NaN, so that a NaN result was written by the lab.
  float mean_of(const float* in, std::size_t n) { return runner().run(lab(), in, n, 0x3F); }

  /// The lab's mean of \p host, as mean_of() above.
  float mean_of(const std::vector<float>& host) {
    const DeviceBuffer<float> in(host);
    return mean_of(in.data(), host.size());
  }
};

/// The exact mean of \p sum / \p n rounded once to float.
float exact_mean(double sum, std::size_t n) {
  return static_cast<float>(sum / static_cast<double>(n));
}

// ---- prime and 3 x 2^k +- 1 sizes
// -----------------------------------------------------------------

class HiddenMeanSizes : public HiddenMean, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(HiddenMeanSizes, ExactIntegers) {
  const std::size_t n = GetParam();
  const std::vector<float> host = exact_integers(n, input_seed(n + 0x3EA));
  expect_bits(mean_of(host), exact_mean(reference_sum(host), n),
              "exact integers, n = " + std::to_string(n) + " (no element is 0)");
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenMeanSizes,
                         ::testing::Values<std::size_t>(3, 127, 3071, 3073, 65521, 196607, 196609,
                                                        999983, 3145727, 3145729, 16777213),
                         ::testing::PrintToStringParamName());

// ---- n that is not a float --------------------------------------------------------------------

class HiddenMeanCount : public HiddenMean, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(HiddenMeanCount, DividesByTheExactCount) {
  const std::size_t n = GetParam();
  const float n_as_float = static_cast<float>(n);
  ASSERT_NE(static_cast<std::size_t>(n_as_float), n) << "n must not be a float";
  // The smallest sum s whose mean s / n, rounded once, differs from the float quotient
  // s / float(n) and from s * (1 / float(n)): what `total / n` gives with a float total.
  int s = 1;
  while (exact_mean(s, n) == static_cast<float>(s) / n_as_float ||
         exact_mean(s, n) == static_cast<float>(s) * (1.0f / n_as_float)) {
    ++s;
    ASSERT_LT(s, 1000) << "no sum tells the exact mean from the float one";
  }
  // Zeros, s ones at places drawn from the seed (the last at the end), and pairs +-k that
  // cancel: every partial sum is a small integer. Only the places that are not zero are kept
  // on the host; the zeros are written on the GPU.
  std::map<std::size_t, float> placed;
  for (int k = 0; k < s; ++k) placed[k == 0 ? n - 1 : mix(input_seed(0xC0), k) % n] += 1.0f;
  for (int k = 1; k <= 20; ++k) {
    placed[mix(input_seed(0xC100), k) % n] += static_cast<float>(k % 8 + 1);
    placed[mix(input_seed(0xC200), k) % n] -= static_cast<float>(k % 8 + 1);
  }
  DeviceBuffer<float> in(n);
  in.fill_bytes(0);  // +0.0f
  for (const auto& [p, v] : placed) set_element(in.data(), p, v);
  expect_bits(mean_of(in.data(), n), exact_mean(s, n),
              "n = " + std::to_string(n) + " (" + std::to_string(n_as_float) +
                  " as a float), sum " + std::to_string(s) +
                  ": divide the sum by n once, in double (" +
                  describe(static_cast<float>(s) / n_as_float) + " is the quotient by float(n))");
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenMeanCount,
                         ::testing::Values<std::size_t>((std::size_t{1} << 24) + 1,
                                                        3 * (std::size_t{1} << 23) + 1, 50331653),
                         ::testing::PrintToStringParamName());

// ---- infinities and NaN -----------------------------------------------------------------------

TEST_F(HiddenMean, InfinitiesAndNaN) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 1;
  std::vector<float> host(n, 1.0f);
  host[n / 3] = kInf;
  expect_bits(mean_of(host), kInf,
              "ones and +inf at index n / 3: +inf (a compensated sum turns it into NaN: the "
              "correction (t - sum) - y is inf - inf)");
  host[n / 3] = 1.0f;
  host[n - 1] = kInf;
  expect_bits(mean_of(host), kInf, "ones and +inf at the last index: +inf");
  host[5] = -kInf;
  expect_bits(mean_of(host), kNaN, "+inf at the last index and -inf at index 5: NaN");
  host[n - 1] = 1.0f;
  expect_bits(mean_of(host), -kInf, "-inf at index 5, ones elsewhere: -inf");
  host[5] = 1.0f;
  host[n / 2] = kNaN;
  expect_bits(mean_of(host), kNaN, "a NaN in the middle: NaN");
}

// ---- windows of one allocation, with huge neighbours ------------------------------------------

TEST_F(HiddenMean, WindowsOfOneAllocation) {
  // A float read from outside a window adds 1e30 to its sum.
  const std::vector<float> host = exact_integers(kWindowSpan, input_seed(0xEA0));
  DeviceBuffer<float> in(host);
  for_each_window(host, in, std::pair{1e30f, 1e30f}, [&](const Window& w) {
    expect_bits(run(w.device, w.n), exact_mean(reference_sum(w.host), w.n),
                "exact integers (a huge mean: a float outside the window was read)");
  });
}

// ---- a value that moves and changes while the ends stay the same -----------------------------

TEST_F(HiddenMean, MovingValueWithNewValues) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 1;
  DeviceBuffer<float> in(n);
  in.fill_bytes(0);
  std::size_t previous = 0;
  for (int k = 0; k < 16; ++k) {
    // -8..-1, 1..8 in a scrambled order: neither the last answer nor a running total is right.
    const int v = (5 * k) % 16 - 8;
    const float value = static_cast<float>(v < 0 ? v : v + 1);
    const std::size_t p = 64 + mix(input_seed(0xEA1), k) % (n - 128);
    if (k > 0) set_element(in.data(), previous, 0.0f);
    set_element(in.data(), p, value);
    expect_bits(run(in.data(), n), exact_mean(value, n),
                "round " + std::to_string(k) + ": " + std::to_string(value) + " at index " +
                    std::to_string(p) +
                    ", zeros elsewhere, the same pointer, n and ends as "
                    "every other round");
    previous = p;
  }
}

}  // namespace
}  // namespace reduce::testing
