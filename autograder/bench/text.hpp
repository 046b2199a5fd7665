/// \file
/// \brief The benchmark's text helpers: lists and sizes from the environment, numbers in tables.
#pragma once

#include <reduce/split.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace reduce::bench {

/// The non-empty parts of a list (reduce/split.hpp).
using reduce::split;

/// "67108864" or "2^26".
std::size_t parse_size(const std::string& text);

/// The sizes listed in the environment variable \p variable ("2^26,1000"), else in \p fallback.
std::vector<std::size_t> size_list(const char* variable, const char* fallback);

/// \p v with \p digits decimals; "-" when not finite.
std::string fixed(double v, int digits);

}  // namespace reduce::bench
