// Hidden tests of lab 18's reproducible sum: the hidden sum suite (sum_hidden_test.cu, run on
// reduce::sum_reproducible: course.json's `suites`), and the correctly rounded sum, bit for bit,
// on inputs of sizes, ranges and orders drawn from the run's seed.
#include "accuracy.hpp"
#include "sum_hidden_suite.hpp"

#include <reduce/generators.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

class HiddenSumReproducibleDrawn : public HiddenSum, public ::testing::WithParamInterface<int> {};

TEST_P(HiddenSumReproducibleDrawn, CorrectlyRounded) {
  const std::size_t n = drawn_size(200 + GetParam());
  const std::uint64_t seed = input_seed(0xEC0 + n);
  const std::vector<float> host = GetParam() % 3 == 0   ? full_range(n, seed)
                                  : GetParam() % 3 == 1 ? cancelling_shuffled(n, seed)
                                                        : make_data(Data::kWideRange, n, seed);
  expect_correctly_rounded(run(host), host, "input kind " + std::to_string(GetParam() % 3));
}

INSTANTIATE_TEST_SUITE_P(Draws, HiddenSumReproducibleDrawn, ::testing::Range(0, 9));

/// The reproducible sum's own tests that need no parameter.
class HiddenSumReproducible : public HiddenSum {};

TEST_F(HiddenSumReproducible, RoundsOnceAtRandomPlaces) {
  // 1 + 2^-24 + 2^-60 (correctly rounded: 1 + 2^-23; through double: 1) with the three terms
  // at places drawn from the seed, among zeros and pairs that cancel exactly.
  const std::size_t n = 3000017;
  std::vector<float> host(n, 0.0f);
  const float terms[] = {1.0f, 0x1.0p-24f, 0x1.0p-60f};
  for (std::uint64_t round = 0; round < 3; ++round) {
    std::fill(host.begin(), host.end(), 0.0f);
    for (std::size_t k = 0; k < 200; ++k) {
      const std::size_t a = mix(input_seed(1000, round), 2 * k) % n;
      const std::size_t b = mix(input_seed(1000, round), 2 * k + 1) % n;
      if (a == b) continue;
      host[a] = 0x1.0p20f + static_cast<float>(k);
      host[b] = -host[a];
    }
    for (std::size_t k = 0; k < 3; ++k) host[mix(input_seed(0x7E, round), k) % n] = terms[k];
    expect_correctly_rounded(run(host), host, "round " + std::to_string(round));
  }
}

}  // namespace
}  // namespace reduce::testing
