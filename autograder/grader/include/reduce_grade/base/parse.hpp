/// \file
/// \brief Reading text that a lab can influence (its output, its logs, files written while it
/// ran) without ever stopping the grader: numbers that never throw or overflow, bounded regex
/// input and bounded file reads. Every function here returns a value or "unreadable"
/// (std::nullopt); none throws on any input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace reduce::grade {

/// The longest line handed to std::regex. libstdc++'s regex matcher recurses once per
/// character it consumes, so a long enough line overflows the stack: longer lines are not
/// searched at all (the summaries and markers the grader looks for are short).
constexpr std::size_t kMaxRegexLine = 1024;

/// The non-negative decimal integer that is the whole of \p text (digits only: no sign, no
/// space), or std::nullopt when \p text is empty, holds anything else, or exceeds \p max
/// (a 20-digit count is unreadable, not a wrapped number).
std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max = UINT64_MAX);

/// The finite number that is the whole of \p text ("4408.1", "-2", "1e3"), or std::nullopt
/// (empty, trailing characters, "inf", "nan", out of range).
std::optional<double> parse_number(std::string_view text);

/// The decimal digits at the start of \p text ("7" of "7 timed runs"; empty when none).
std::string_view leading_digits(std::string_view text);

/// At most \p max_bytes bytes from the start of \p path (empty when it cannot be read); sets
/// \p cut (when given) to whether the file held more.
std::string read_file_at_most(const std::filesystem::path& path, std::size_t max_bytes,
                              bool* cut = nullptr);

}  // namespace reduce::grade
