/// \file
/// \brief What the grader checks about a built lab before any of its code runs: its library, its
/// sources and the files its compiles read.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/observations/library_check.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace reduce::grade {

/// Everything the grader checks about a built lab before running any of its code: library
/// reductions in the library and the sources, the files each compile read (its depfile from
/// \p deps_log, read_deps_log(): only the staged lab folder, the contract headers, the toolkit less
/// CUB and Thrust, the system's headers), and the library's imports, exports and raw system
/// calls. A part that could not be checked is a finding too ("unchecked"): a lab is run only once
/// all of it was. Safe to call for several labs at once.
LibraryCheck inspect_built_lab(const std::filesystem::path& build_dir, const BuildManifest& built,
                               const std::string& deps_log, const std::filesystem::path& tree,
                               const std::string& lab, const std::vector<OpPlan>& plans,
                               const Rubric& rubric);

}  // namespace reduce::grade
