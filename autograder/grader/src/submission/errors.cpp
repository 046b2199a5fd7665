#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/errors.hpp>

#include <cstdlib>
#include <exception>
#include <stdexcept>

namespace reduce::grade {

namespace {

const std::string kInternalError = "could not grade: internal error: ";

}  // namespace

std::string handled_exception_message() {
  try {
    throw;
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const SubmissionVoid& e) {
    return e.what();
  } catch (const std::exception& e) {
    return internal_error_message(e.what());
  } catch (...) {
    return internal_error_message("an exception that is not a std::exception");
  }
}

std::string internal_error_message(const std::string& what) {
  return is_internal_error(what) ? what : kInternalError + (what.empty() ? "unknown" : what);
}

bool is_internal_error(const std::string& message) {
  return message.compare(0, kInternalError.size(), kInternalError) == 0;
}

void inject_test_fault(const GradeOptions& options) {
  const char* spec = std::getenv("REDUCE_GRADE_TEST_THROW");
  if (spec == nullptr || *spec == '\0') return;
  const std::string name = options.label.empty()
                               ? fs::path(options.submission).lexically_normal().filename().string()
                               : options.label;
  const std::string text = spec;
  if (text == name) throw std::runtime_error("fault injected for the test of " + name);
  if (text == name + ":other") throw 42;
}

}  // namespace reduce::grade
