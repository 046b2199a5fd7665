/// \file
/// \brief Copies a submission's lab folder, and the lab contract headers, into a clean staging
/// folder that is the only thing the grader compiles.
///
/// A submission may contain regular files and folders only. Symbolic links (even dangling ones,
/// even deep in subfolders), special files (fifo, socket, device), regular files with more than
/// one hard link and oversized files are refused, each with a message naming the file and why.
/// Nothing is ever followed: every entry is examined with lstat() and opened with O_NOFOLLOW.
/// The same holds above the lab folder: a submission folder, its `labs/` or a zip's top folder
/// that is a link is refused, so that no student's labs are the files of another student or of
/// the course (`mallory/labs -> ../alice/labs`, a link to `solutions/`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace reduce::grade {

/// Limits on what a lab folder of a submission may hold.
struct StageLimits {
  std::uintmax_t max_file_bytes = std::uintmax_t{1} << 20;   ///< one file: 1 MiB
  std::uintmax_t max_total_bytes = std::uintmax_t{8} << 20;  ///< all files together: 8 MiB
  std::size_t max_files = 256;                               ///< regular files in the lab folder
  int max_depth = 8;                                         ///< folder levels below the lab folder
};

/// What staging copied, or why it refused.
struct StageResult {
  bool ok = false;  ///< everything was staged and nothing was refused
  /// One sentence per refused entry, e.g. "09_warp_shuffle/x.cuh: is a symbolic link (to
  /// ../../solutions/09_warp_shuffle/sum.cu); a submission may contain only regular files and
  /// folders". Empty when ok.
  std::vector<std::string> problems;
  std::vector<std::filesystem::path> files;  ///< the staged files (paths in the staging folder)

  /// "staged 3 files" or the problems joined with "; ".
  std::string describe() const;
};

/// The contract headers of common/include/reduce/ a lab may include: lab.cuh, cuda_check.cuh,
/// multi_pass.cuh, not_implemented.hpp.
const std::vector<std::string>& contract_header_names();

/// Copies \p submission_lab_dir (one lab folder of a submission) into \p staging_lab_dir, which
/// must not exist or be an empty folder. Copies regular files (mode 0644) and folders only.
/// Every folder on the way to \p submission_lab_dir, from /, must be a folder and not a link
/// ("09_warp_shuffle: the folder labs that holds it is a symbolic link (to ../alice/labs); ..."):
/// name it from the submission's real path, its links resolved above the submission only, as
/// prepare_submission() does.
/// On any refusal ok is false, every problem found is listed and \p staging_lab_dir is left
/// empty, so that nothing half-staged can be compiled.
/// Problem texts contain "symbolic link", "not a regular file", "hard link", "too large",
/// "too many files", "nested too deeply", "unusual character" or "cannot be read".
StageResult stage_lab(const std::filesystem::path& submission_lab_dir,
                      const std::filesystem::path& staging_lab_dir, const StageLimits& limits = {});

/// Why a folder above \p lab_dir (a submission's `labs/`, a zip's top folder) may not be read
/// through, or empty: every folder from / down to \p lab_dir's parent is examined with lstat(),
/// so that a link is seen and never followed ("the folder labs that holds it is a symbolic link
/// (to ../alice/labs); a submission must be its own folders and regular files, and nothing is
/// read through a link"). Name \p lab_dir from a real path: links above the submission are
/// refused too.
std::string link_above(const std::filesystem::path& lab_dir);

/// Throws ConfigError when \p submission (a submission's top folder, as the command names it)
/// is itself a symbolic link: "the submission folder mallory is a symbolic link (to ../alice): a
/// submission must be its own folder of regular files, so none of its labs is graded". It is
/// looked at with lstat() before anything resolves it; links above it (a course checked out
/// through a link) are not the submission's and are allowed.
void refuse_linked_submission(const std::filesystem::path& submission);

/// Copies exactly \p headers (file names, e.g. contract_header_names()) from
/// \p course_root/common/include/reduce/ to \p staging_include_dir/reduce/, so that a lab
/// compiled with `-I <staging_include_dir>` reaches the contract and nothing else of the course
/// (`<reduce/../../../solutions/...>` leads nowhere). files lists the staged headers: give them
/// to DependencyPolicy::contract_headers (library_check.hpp).
StageResult stage_contract_headers(
    const std::filesystem::path& course_root, const std::filesystem::path& staging_include_dir,
    const std::vector<std::string>& headers = contract_header_names());

}  // namespace reduce::grade
