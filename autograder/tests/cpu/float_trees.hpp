// Float sums and products in the order a GPU tree adds: neighbours in pairs, level after level.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace reduce {

/// \p level combined by \p op as a tree over neighbours (an element without a neighbour meets
/// \p identity); \p identity for an empty input.
template <class Op>
float neighbour_tree(std::vector<float> level, float identity, Op op) {
  if (level.empty()) return identity;
  while (level.size() > 1) {
    std::vector<float> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < next.size(); ++i)
      next[i] = op(level[2 * i], 2 * i + 1 < level.size() ? level[2 * i + 1] : identity);
    level.swap(next);
  }
  return level[0];
}

/// A float sum as a pairwise tree over neighbours.
inline float pairwise_float_sum(std::vector<float> x) {
  return neighbour_tree(std::move(x), 0.0f, std::plus<float>());
}

/// A float product as a pairwise tree over neighbours.
inline float pairwise_float_product(std::vector<float> x) {
  return neighbour_tree(std::move(x), 1.0f, std::multiplies<float>());
}

}  // namespace reduce
