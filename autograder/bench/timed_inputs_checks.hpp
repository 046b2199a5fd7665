/// \file
/// \brief What the tests of the graded benchmark's inputs share: each answer computed the slow
/// way, from the input itself, to hold expected_result() against.
#pragma once

#include "timed_inputs.hpp"

#include <reduce/exact_sum.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace reduce::timed::testing {

/// Every answer, with its operation's name for test messages.
inline const std::vector<std::pair<Answer, std::string>>& all_answers() {
  static const std::vector<std::pair<Answer, std::string>> answers = [] {
    std::vector<std::pair<Answer, std::string>> all;
    for (const AnswerTraits& row : kAnswers) all.emplace_back(row.answer, row.name);
    return all;
  }();
  return answers;
}

/// \p answer of \p x, from x alone: exact sums (ExactSum), the mean of the exact sum, the
/// largest and smallest value, the first index of the largest, the product in double (exact for
/// factors +-2^k), the reproducible sum as the exact sum rounded once.
inline double brute_force(Answer answer, const std::vector<float>& x) {
  switch (answer) {
    case Answer::kSum:
    case Answer::kCompensatedSum: {
      ExactSum exact;
      exact.add(x.data(), x.size());
      return exact.to_double();
    }
    case Answer::kMean: {
      ExactSum exact;
      exact.add(x.data(), x.size());
      return x.empty() ? 0.0 : exact.to_double() / static_cast<double>(x.size());
    }
    case Answer::kReproducibleSum: {
      ExactSum exact;
      exact.add(x.data(), x.size());
      return exact.to_float();
    }
    case Answer::kMaximum:
    case Answer::kArgmax: {
      std::size_t at = 0;
      for (std::size_t i = 1; i < x.size(); ++i)
        if (x[i] > x[at]) at = i;
      return answer == Answer::kArgmax ? static_cast<double>(at) : x[at];
    }
    case Answer::kMinimum: {
      float best = x.at(0);
      for (float v : x) best = v < best ? v : best;
      return best;
    }
    case Answer::kProduct: {
      double product = 1.0;
      for (float v : x) product *= v;
      return product;
    }
  }
  return 0.0;
}

}  // namespace reduce::timed::testing
