// The graded benchmark's inputs on the GPU: the pass (reduce::timed::regenerate) writes exactly
// what its host twin computes, its tally is the host's, the expected results built from it are
// the inputs' own answers, and its cost at the graded size. Skipped without a GPU.
#include "timed_inputs.hpp"
#include "timed_inputs_checks.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>
#include <reduce/event_timer.cuh>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

using reduce::DeviceBuffer;
using reduce::timed::Answer;
using reduce::timed::Recipe;
using reduce::timed::Tally;
using reduce::timed::testing::all_answers;
using reduce::timed::testing::brute_force;

#define REQUIRE_GPU()                                                           \
  do {                                                                          \
    if (!reduce::has_gpu()) GTEST_SKIP() << "no CUDA device: GPU test skipped"; \
  } while (0)

/// One input made on the device as the benchmark makes it, and read back.
struct Made {
  Recipe recipe;
  Tally tally;             ///< the device's
  std::vector<float> x;    ///< after the finishing writes
  std::vector<float> raw;  ///< the pass's output alone
};

Made make_on_device(Answer answer, std::size_t n, reduce::KeyedStream& rng,
                    DeviceBuffer<float>& x) {
  Made m;
  m.recipe = reduce::timed::draw_recipe(answer, n, rng);
  DeviceBuffer<Tally> tally(1);
  tally.fill_bytes(0);
  x.fill_bytes(0xFF);  // poison: every element must be written
  reduce::timed::regenerate(x.data(), m.recipe, tally.data(), nullptr);
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  m.tally = tally.to_host()[0];
  m.raw.resize(n);
  REDUCE_CUDA_CHECK(cudaMemcpy(m.raw.data(), x.data(), n * sizeof(float), cudaMemcpyDeviceToHost));
  m.x = m.raw;
  for (const reduce::timed::Write& w : reduce::timed::finishing_writes(answer, m.recipe, m.tally))
    m.x[w.at] = w.value;
  return m;
}

std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// The pass matches element_at() bit for bit and tally_on_host() exactly (magnitudes: to the
/// rounding of a double sum in another order), and the expected result is the input's own.
void check_against_host(Answer answer, const std::string& name, std::size_t n,
                        reduce::KeyedStream& rng) {
  DeviceBuffer<float> x(std::max<std::size_t>(n, 1));
  const Made m = make_on_device(answer, n, rng, x);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(bits(m.raw[i]), bits(reduce::timed::element_at(m.recipe, i).value))
        << name << " n = " << n << " at " << i;
  const Tally host = reduce::timed::tally_on_host(m.recipe);
  EXPECT_EQ(m.tally.integers, host.integers) << name << " n = " << n;
  EXPECT_NEAR(m.tally.magnitudes, host.magnitudes, 1e-12 * host.magnitudes) << name;
  const reduce::timed::Expected e = reduce::timed::expected_result(answer, m.recipe, m.tally);
  EXPECT_EQ(brute_force(answer, m.x), e.value) << name << " n = " << n;
}

TEST(TimedInputsOnDevice, ThePassIsItsHostTwin) {
  REQUIRE_GPU();
  reduce::KeyedStream rng(41);
  for (const auto& [answer, name] : all_answers())
    for (std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, std::size_t{4097},
                          (std::size_t{1} << 20) + 3, (std::size_t{1} << 22) - 5})
      check_against_host(answer, name, n, rng);
}

TEST(TimedInputsOnDevice, LargeIntegerContentIsExact) {
  REQUIRE_GPU();
  reduce::KeyedStream rng(43);
  // One +-1 per run beyond 2^24 elements: the graded sizes' content.
  for (std::size_t n : {(std::size_t{1} << 24) + 5, (std::size_t{1} << 26) - 1234})
    for (Answer answer : {Answer::kSum, Answer::kMean}) check_against_host(answer, "sum", n, rng);
}

/// The rubric's timed size is 2^28 less a few: each content's pass there, checked and timed.
TEST(TimedInputsOnDevice, AtTheGradedSizeCorrectAndCheap) {
  REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 28) - 1234;
  std::size_t free = 0, total = 0;
  REDUCE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (free < 3 * n * sizeof(float)) GTEST_SKIP() << "not enough device memory for 2^28 floats";
  DeviceBuffer<float> x(n);
  DeviceBuffer<Tally> tally(1);
  reduce::KeyedStream rng(47);
  for (const auto& [answer, name] : all_answers()) {
    // Correct at this size too (the host twin's pass takes a few seconds per content).
    if (answer == Answer::kSum || answer == Answer::kCompensatedSum ||
        answer == Answer::kReproducibleSum || answer == Answer::kArgmax) {
      const Made m = make_on_device(answer, n, rng, x);
      const Tally host = reduce::timed::tally_on_host(m.recipe);
      EXPECT_EQ(m.tally.integers, host.integers) << name;
      EXPECT_EQ(brute_force(answer, m.x),
                reduce::timed::expected_result(answer, m.recipe, m.tally).value)
          << name;
    }
    // The cost, as the benchmark pays it before every call (outside the clock).
    reduce::EventTimer timer;
    std::vector<double> ms;
    for (int k = 0; k < 11; ++k) {
      const Recipe r = reduce::timed::draw_recipe(answer, n, rng);
      tally.fill_bytes(0);
      timer.start(nullptr);
      reduce::timed::regenerate(x.data(), r, tally.data(), nullptr);
      timer.stop(nullptr);
      ms.push_back(timer.elapsed_ms());
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::printf("[ regenerate ] %-17s n = %zu: %.3f ms per input (%.0f GB/s written)\n",
                name.c_str(), n, median, n * sizeof(float) / (median * 1e-3) / 1e9);
    // A memory-bound pass writes 1 GiB in well under a millisecond on a current GPU; this only
    // catches a pass gone badly wrong (a recipe copied per thread, a serialised tally).
    EXPECT_LT(median, 20.0) << name;
  }
}

TEST(TimedInputsOnDevice, EveryPassWritesEveryElementAnew) {
  REQUIRE_GPU();
  const std::size_t n = (std::size_t{1} << 20) + 1;
  DeviceBuffer<float> x(n);
  reduce::KeyedStream rng(53);
  for (const auto& [answer, name] : all_answers()) {
    const Made first = make_on_device(answer, n, rng, x);
    const Made second = make_on_device(answer, n, rng, x);
    std::size_t changed = 0;
    for (std::size_t i = 0; i < n; ++i) changed += first.x[i] != second.x[i];
    EXPECT_GT(static_cast<double>(changed) / n, answer == Answer::kProduct ? 0.4 : 0.8) << name;
    if (answer != Answer::kProduct)  // +-2^k takes few values: two may agree by chance
      EXPECT_NE(reduce::timed::expected_result(answer, first.recipe, first.tally).value,
                reduce::timed::expected_result(answer, second.recipe, second.tally).value)
          << name;
  }
}

}  // namespace
