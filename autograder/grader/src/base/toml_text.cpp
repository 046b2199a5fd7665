#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/toml_text.hpp>

#include <fmt/format.h>

namespace reduce::grade {

toml::table parse_toml(std::string_view text, const std::string& source_name) {
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}: TOML syntax error: {}", source_name,
                                  e.source().begin.line, e.description()));
  }
}

}  // namespace reduce::grade
