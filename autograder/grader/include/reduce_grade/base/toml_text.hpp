/// \file
/// \brief TOML text parsed the one way for every file the grader reads (rubric.toml,
/// part_seconds.toml, a planted case's expected.toml), with one form of syntax error.
#pragma once

#include <toml++/toml.h>

#include <string>
#include <string_view>

namespace reduce::grade {

/// Parses \p text, read from \p source_name. Throws ConfigError (course.hpp)
/// "<source_name>:<line>: TOML syntax error: <what>" for text that is not TOML.
toml::table parse_toml(std::string_view text, const std::string& source_name);

}  // namespace reduce::grade
