/// \file
/// \brief Lab folders of a batch whose files are byte-identical across students: a hint for the
/// instructor (similar_sources.txt in the batch's report folder), never a grade.
///
/// Only what a student changed counts: a file byte-identical to the course's stub at the same
/// place is left out, so that untouched stubs, READMEs and helpers do not make everyone alike,
/// and a lab folder left as the stub is never listed. Nothing is followed: a lab folder reached
/// through a link (staging refuses it too) and any entry that is not a regular file or a
/// folder make that lab folder incomparable.
#pragma once

#include <reduce_grade/base/course.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// Students whose lab folder holds the same changed files.
struct SimilarGroup {
  std::string lab;                    ///< lab folder
  std::vector<std::string> students;  ///< two or more, in the batch's order
};

/// The groups of every lab of \p labs, in \p labs' order: \p trees gives each student's name and
/// the folder that holds its lab folders (resolve_submission_tree(), named from a real path), and
/// \p stubs the course's `labs/` folder. A lab folder larger than \p max_bytes in all is left out.
std::vector<SimilarGroup> find_similar_sources(
    const std::vector<std::pair<std::string, std::filesystem::path>>& trees,
    const std::vector<std::string>& labs, const std::filesystem::path& stubs,
    std::size_t max_bytes = std::size_t{8} << 20);

/// Each student's lab tree in the batch folder \p folder, for find_similar_sources(): the
/// student and resolve_submission_tree() of its folder, named from \p folder's real path. A
/// student folder that is a symbolic link is not its own (refuse_linked_submission()) and is
/// left out.
std::vector<std::pair<std::string, std::filesystem::path>> batch_trees(
    const Course& course, const std::filesystem::path& folder,
    const std::vector<std::string>& students);

/// similar_sources.txt: a header saying what it is, then one line per group
/// ("09_warp_shuffle: alice, mallory"), names made inert; \p students is the batch's size.
std::string similar_sources_text(const std::vector<SimilarGroup>& groups, std::size_t students);

}  // namespace reduce::grade
