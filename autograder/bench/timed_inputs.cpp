// The host side of the graded benchmark's inputs (timed_inputs.hpp): recipes, expected results
// and lab 18's trap.
#include "timed_inputs.hpp"

#include <reduce/exact_sum.hpp>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace reduce::timed {

Answer answer_named(const std::string& name) {
  for (const AnswerTraits& row : kAnswers)
    if (name == row.name) return row.answer;
  throw std::invalid_argument("no graded input is defined for the operation " + name +
                              " (kAnswers, timed_inputs.hpp)");
}

namespace {

/// Runs of 2^shift elements cover n in at most \p runs runs.
unsigned shift_for_runs(std::size_t n, std::size_t runs) {
  unsigned shift = 0;
  while (((n + (std::size_t{1} << shift) - 1) >> shift) > runs) ++shift;
  return shift;
}

}  // namespace

Recipe draw_recipe(Answer answer, std::size_t n, KeyedStream& rng) {
  Recipe r;
  r.content = traits_of(answer).content;
  r.seed = rng();
  r.n = n;
  if (n == 0) return r;
  switch (r.content) {
    case Content::kIntegers: {
      constexpr std::size_t kBudget = std::size_t{1} << 24;  // reduce::kExactBudget
      if (n * 8 <= kBudget) {
        r.magnitude = 8;
      } else if (n > kBudget) {
        r.run_shift = shift_for_runs(n, kBudget / 2);  // at most 2^23 runs: sum |x| <= 2^23
      }
      break;
    }
    case Content::kExtreme: {
      const int binade = static_cast<int>(rng() % 17) - 8;
      const float mantissa = 1.0f + static_cast<float>(rng() & 0x7FFFFFu) * 0x1.0p-23f;
      r.top = std::ldexp(mantissa, binade);
      if ((rng() & 1) != 0) r.top = -r.top;
      r.low = r.top - std::ldexp(2.0f, binade);
      r.sign = answer == Answer::kMinimum ? -1.0f : 1.0f;
      const int ties = 1 + static_cast<int>(rng() % kMaxTies);
      for (int k = 0; k < ties; ++k) r.ties[k] = rng() % n;
      break;
    }
    case Content::kFactors: {
      r.run_shift = shift_for_runs(n, kMaxFactorRuns);
      const std::size_t run = std::size_t{1} << r.run_shift;
      std::fill(std::begin(r.twos), std::end(r.twos), kNowhere);
      std::fill(std::begin(r.halves), std::end(r.halves), kNowhere);
      std::size_t twos = 0, halves = 0;
      for (std::size_t j = 0; j * run < n; ++j) {
        const std::size_t first = j * run, length = std::min(run, n - first);
        if ((rng() & 1) != 0 && twos < kProductExponentBudget) {
          r.twos[j] = first + rng() % length;
          ++twos;
        }
        if ((rng() & 1) != 0 && halves < kProductExponentBudget) {
          const std::size_t at = first + rng() % length;
          if (at != r.twos[j]) {
            r.halves[j] = at;
            ++halves;
          }
        }
      }
      break;
    }
    case Content::kCancelling: {
      r.mirror = rng() % n;
      r.small_below =
          n <= kSmallIntegers ? std::uint64_t{1} << 32 : (std::uint64_t{kSmallIntegers} << 32) / n;
      if (answer == Answer::kReproducibleSum && n >= 3) {
        std::size_t at = rng() % n;
        while (partner_of(r, at) == at) at = rng() % n;  // a pair, not the lone middle
        r.reserved = std::min(at, partner_of(r, at));
        r.trap_toward_zero = (rng() & 1) != 0;
        r.trap_half_first = (rng() & 1) != 0;
      }
      break;
    }
  }
  return r;
}

Trap make_trap(std::int64_t integers, bool toward_zero) {
  Trap trap;
  if (integers == 0) {
    trap.half = 1.0f;
    trap.expected = 1.0f;
    return trap;
  }
  if (integers >= (std::int64_t{1} << 24) || integers <= -(std::int64_t{1} << 24))
    throw std::logic_error("make_trap: the integers' sum is not exact in float");
  const auto s = static_cast<float>(integers);
  const float magnitude = std::fabs(s);
  const float neighbour = std::nextafter(magnitude, toward_zero ? 0.0f : INFINITY);
  const float gap = std::fabs(neighbour - magnitude);  // exact: two adjacent floats
  std::uint32_t bits = 0;
  std::memcpy(&bits, &magnitude, sizeof bits);
  // The tie |S| +- gap / 2 rounds to the even one of |S| and its neighbour: tiny pulls the exact
  // sum towards the odd one.
  const float to_neighbour = neighbour > magnitude ? 1.0f : -1.0f;
  const float pull = (bits & 1u) == 0 ? to_neighbour : -to_neighbour;
  const float sign = s < 0 ? -1.0f : 1.0f;
  trap.half = sign * to_neighbour * (gap / 2);
  trap.tiny = sign * pull * 0x1.0p-100f;
  ExactSum exact;
  for (float v : {s, trap.half, trap.tiny}) exact.add(v);
  trap.expected = exact.to_float();
  return trap;
}

std::vector<Write> finishing_writes(Answer answer, const Recipe& r, const Tally& t) {
  if (answer != Answer::kReproducibleSum || r.reserved == kNowhere) return {};
  const Trap trap = make_trap(t.integers, r.trap_toward_zero);
  const std::size_t upper = partner_of(r, r.reserved);
  const std::size_t half_at = r.trap_half_first ? r.reserved : upper;
  const std::size_t tiny_at = r.trap_half_first ? upper : r.reserved;
  return {{half_at, trap.half}, {tiny_at, trap.tiny}};
}

Expected expected_result(Answer answer, const Recipe& r, const Tally& t) {
  Expected e;
  const auto integers = static_cast<double>(t.integers);
  switch (answer) {
    case Answer::kSum:
      e.value = integers;
      break;
    case Answer::kMean:
      e.value = r.n > 0 ? integers / static_cast<double>(r.n) : 0.0;
      break;
    case Answer::kMaximum:
    case Answer::kMinimum:
      e.value = r.sign * r.top;
      break;
    case Answer::kArgmax:
      e.value = static_cast<double>(*std::min_element(std::begin(r.ties), std::end(r.ties)));
      break;
    case Answer::kProduct: {
      int exponent = 0;
      for (int j = 0; j < kMaxFactorRuns; ++j) {
        if (r.twos[j] < r.n) ++exponent;
        if (r.halves[j] < r.n) --exponent;
      }
      e.value = std::ldexp((t.integers & 1) != 0 ? -1.0 : 1.0, exponent);
      break;
    }
    case Answer::kCompensatedSum:
      e.value = integers;
      e.integers = integers;
      // The magnitudes were added in double by atomics in no fixed order: 1 % of room.
      e.tolerance = compensated_error_bound(kCompensatedChain, compensated_depth(r.n), integers,
                                            t.magnitudes * 1.01);
      break;
    case Answer::kReproducibleSum:
      e.integers = integers;
      e.value =
          r.reserved == kNowhere ? integers : make_trap(t.integers, r.trap_toward_zero).expected;
      break;
  }
  return e;
}

Tally tally_on_host(const Recipe& r) {
  Tally t;
  for (std::size_t i = 0; i < r.n; ++i) {
    const Element e = element_at(r, i);
    t.integers += e.integer;
    if (r.content == Content::kCancelling) t.magnitudes += std::fabs(e.value);
  }
  return t;
}

std::vector<float> materialize(Answer answer, const Recipe& r, const Tally& t) {
  std::vector<float> x(r.n);
  for (std::size_t i = 0; i < r.n; ++i) x[i] = element_at(r, i).value;
  for (const Write& w : finishing_writes(answer, r, t)) x[w.at] = w.value;
  return x;
}

}  // namespace reduce::timed
