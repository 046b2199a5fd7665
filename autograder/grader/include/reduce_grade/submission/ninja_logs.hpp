/// \file
/// \brief Ninja's two logs of a build folder, read while ninja may still be writing them: the
/// outputs it has finished (`.ninja_log`) and what each object's compile read (`.ninja_deps`).
/// `ninja -t deps` cannot be run during a build: it may rewrite the deps log it reads.
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace reduce::grade {

/// The outputs ninja has finished in \p build_dir so far, as build.ninja names them (relative to
/// the folder), from its build log; a line still being written is left out.
std::set<std::string> finished_outputs(const std::filesystem::path& build_dir);

/// Ninja's deps log of \p build_dir (format 4) as `ninja -t deps` prints it: for each object, its
/// line "<object>: #deps N, deps mtime M (VALID)", its inputs indented below, and an empty line.
/// A record still being written, or one that does not read right, ends the reading; no log or
/// another format gives an empty text.
std::string read_deps_log(const std::filesystem::path& build_dir);

/// The dependency list the compiler wrote (-MD) for a lab's operation, as make-style depfile
/// text taken from \p deps (read_deps_log(), ninja_logs.hpp); empty when ninja has none.
std::string lab_dependencies(const std::string& deps, const std::string& lab,
                             const std::string& op);

}  // namespace reduce::grade
