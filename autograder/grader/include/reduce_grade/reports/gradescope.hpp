/// \file
/// \brief Writes the Gradescope autograder zip: a commit of the course with setup.sh and
/// run_autograder at the zip's top level, as Gradescope requires (docs/grader.md, "Gradescope").
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace reduce::grade {

/// What write_gradescope_zip() is asked to do.
struct GradescopeOptions {
  std::filesystem::path course_root;  ///< the course's git checkout
  std::string ref = "HEAD";           ///< the commit the zip is made of
  std::string labs_spec;  ///< labs the assignment grades, e.g. "04" (empty: the commit's choice)
  std::filesystem::path out_zip;  ///< the zip to write (replaced where it exists)
};

/// What write_gradescope_zip() wrote.
struct GradescopeZip {
  std::string commit;     ///< the full hash of the commit zipped
  std::size_t files = 0;  ///< regular files in the zip
  std::string labs;       ///< the zip's autograder/gradescope/labs (empty: every lab)
  std::string tool;       ///< the program that wrote the zip ("zip" or "python3 -m zipfile")
};

/// Writes the Gradescope autograder zip of the commit \p o.ref of the course at
/// \p o.course_root: the whole commit (git archive: uncommitted work never goes in) but for
/// what grading never reads (solutions/, the planted corpus) and what a build leaves
/// (generated_path()), with autograder/gradescope/setup.sh and run_autograder copied to its top
/// level, executable. With \p o.labs_spec, the zip's autograder/gradescope/labs names those
/// labs. Throws ConfigError for a ref that is not a commit, a commit without the Gradescope
/// scripts, an unknown lab, or an output path that is a folder or cannot be written.
GradescopeZip write_gradescope_zip(const GradescopeOptions& o);

/// True for paths (relative to the course root) that the Gradescope zip leaves out: solutions/
/// (grading does not build them, and the container runs the students' code), the planted-bug
/// corpus, and generated_path().
bool excluded_from_gradescope(const std::string& relative_path);

}  // namespace reduce::grade
