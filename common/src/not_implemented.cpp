#include <reduce/not_implemented.hpp>

namespace reduce {

std::string lab_relative_path(const std::string& source_file) {
  const auto file_start = source_file.find_last_of('/');
  if (file_start == std::string::npos) return "labs/" + source_file;
  const auto folder_start = source_file.find_last_of('/', file_start - 1);
  const auto from = folder_start == std::string::npos ? 0 : folder_start + 1;
  return "labs/" + source_file.substr(from);
}

NotImplemented::NotImplemented(const std::string& source_file)
    : std::logic_error(kNotImplementedPrefix + lab_relative_path(source_file)) {}

}  // namespace reduce
