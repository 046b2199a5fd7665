/// \file
/// \brief How a stub says that the student has not written it yet.
#pragma once

#include <stdexcept>
#include <string>

namespace reduce {

/// How the message of NotImplemented begins: what the checkers and the grader look for to tell a
/// stub's failure from any other.
inline constexpr char kNotImplementedPrefix[] = "not implemented: see ";

/// Thrown by an untouched stub. Its message points at the file the student must complete,
/// e.g. "not implemented: see labs/04_sequential/sum.cu".
class NotImplemented : public std::logic_error {
 public:
  /// \param source_file the stub's __FILE__; only its last two path components are kept
  explicit NotImplemented(const std::string& source_file);
};

/// "labs/<lab folder>/<file>" for any path to a lab source file.
std::string lab_relative_path(const std::string& source_file);

}  // namespace reduce

/// Marks a function the student has to write. Throws reduce::NotImplemented naming this file.
#define REDUCE_NOT_IMPLEMENTED() throw ::reduce::NotImplemented(__FILE__)
