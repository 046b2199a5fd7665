/// \file
/// \brief How a grading that stopped on an exception says so: the grader's own errors apart from
/// the submission's and the configuration's.
#pragma once

#include <reduce_grade/submission/submission.hpp>

#include <string>

namespace reduce::grade {

/// The message of a submission, or a step of one, whose grading stopped on an exception inside
/// the grader (a bug, not the submission's doing): "could not grade: internal error: <what>".
std::string internal_error_message(const std::string& what);

/// True when \p message is one that internal_error_message() wrote.
bool is_internal_error(const std::string& message);

/// The message of the exception being handled (call it inside a catch block only): that of a
/// ConfigError or a SubmissionVoid as it is, any other as internal_error_message().
std::string handled_exception_message();

/// A test-only fault: when the environment variable REDUCE_GRADE_TEST_THROW names this
/// submission (its label, else its folder's name), throws std::runtime_error; with ":other"
/// after the name, a value that is not a std::exception. The grader's own tests use it to show
/// that an exception costs one submission only. The lab's process cannot set the grader's
/// environment.
void inject_test_fault(const GradeOptions& options);

}  // namespace reduce::grade
