/// \file
/// \brief Cutting a list into its items: one way for every process of the course (the grader,
/// the checkers, the lab runner and the benchmark read lists from their command lines,
/// environments and files).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reduce {

/// The items of \p text between characters of \p separators, empty ones dropped: "a,,b," is
/// {"a", "b"} and "" is {}.
inline std::vector<std::string> split(std::string_view text, std::string_view separators) {
  std::vector<std::string> items;
  std::string item;
  for (char c : text) {
    if (separators.find(c) == std::string_view::npos) {
      item += c;
    } else if (!item.empty()) {
      items.push_back(std::move(item));
      item.clear();
    }
  }
  if (!item.empty()) items.push_back(std::move(item));
  return items;
}

/// The fields of \p text between \p separator characters, empty ones kept (the columns of a
/// table's line): "a\t\tb" is {"a", "", "b"} and "" is {""}.
inline std::vector<std::string> split_fields(std::string_view text, char separator) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t at = text.find(separator); at != std::string_view::npos;
       start = at + 1, at = text.find(separator, start))
    fields.emplace_back(text.substr(start, at - start));
  fields.emplace_back(text.substr(start));
  return fields;
}

}  // namespace reduce
