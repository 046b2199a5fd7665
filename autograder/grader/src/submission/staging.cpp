#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/staging.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <system_error>

namespace reduce::grade {
namespace {

std::string errno_text(int error) {
  return std::generic_category().message(error);
}

/// "a fifo", "a socket"... for a file type that is neither a regular file nor a folder.
std::string kind_text(fs::file_type type) {
  switch (type) {
    case fs::file_type::fifo:
      return "a fifo";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::character:
      return "a character device";
    default:
      return "an unknown kind of file";
  }
}

/// A name that a report could show only escaped (a control, C1 or bidirectional character, bytes
/// that are not UTF-8: inert_name() would change it), or with a backslash, which confuses the
/// build's depfiles. Refused, so that no such name reaches the compiler's dependency list, the
/// library check or a report raw.
bool unusual_name(const std::string& name) {
  return name.find('\\') != std::string::npos || inert_name(name, name.size() + 16) != name;
}

/// " (to ../alice/labs)": where the link \p link points, made inert; empty when unreadable.
std::string link_target_text(const fs::path& link) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(link, ec);
  return ec ? "" : " (to " + inert_name(target.string(), 200) + ")";
}

/// Copies regular files without following anything, within limits, collecting problems.
class Copier {
 public:
  Copier(const StageLimits& limits, StageResult& result, bool refuse_hard_links)
      : limits_(limits), result_(result), refuse_hard_links_(refuse_hard_links) {}

  /// Copies the regular file \p from to the new file \p to; \p label names it in problems.
  void copy_file(const fs::path& from, const fs::path& to, const std::string& label) {
    // O_NOFOLLOW: a symbolic link swapped in after the lstat() still fails (ELOOP); O_NONBLOCK:
    // a fifo does not block the open. What is checked is what was opened (fstat).
    const int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (in < 0) {
      const int error = errno;
      if (error == ELOOP)
        problem(label,
                "is a symbolic link; a submission may contain only regular files and folders");
      else
        problem(label, "cannot be read (" + errno_text(error) + ")");
      return;
    }
    struct stat st{};
    if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
      problem(label, "is not a regular file");
      ::close(in);
      return;
    }
    if (refuse_hard_links_ && st.st_nlink > 1) {
      problem(label,
              fmt::format("has {} hard links; a submission's files must not be hard links to "
                          "other files",
                          st.st_nlink));
      ::close(in);
      return;
    }
    const auto size = static_cast<std::uintmax_t>(st.st_size);
    if (size > limits_.max_file_bytes) {
      problem(label, fmt::format("is too large ({} bytes; the limit is {})", size,
                                 byte_size_text(limits_.max_file_bytes)));
      ::close(in);
      return;
    }
    if (total_bytes_ + size > limits_.max_total_bytes) {
      problem(label, fmt::format("makes the lab folder too large (more than {} in all)",
                                 byte_size_text(limits_.max_total_bytes)));
      ::close(in);
      return;
    }
    std::string bytes;
    char buffer[1 << 16];
    while (bytes.size() <= limits_.max_file_bytes) {
      const ssize_t got = ::read(in, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        problem(label, "cannot be read (" + errno_text(errno) + ")");
        ::close(in);
        return;
      }
      if (got == 0) break;
      bytes.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(in);
    if (bytes.size() > limits_.max_file_bytes) {
      problem(label, "is too large (it grew while it was copied)");
      return;
    }
    total_bytes_ += bytes.size();
    std::error_code ec;
    fs::remove(to, ec);  // a stale copy (never followed: remove() does not follow links)
    const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    bool written = out >= 0 && ::fchmod(out, 0644) == 0;
    for (std::size_t done = 0; written && done < bytes.size();) {
      const ssize_t put = ::write(out, bytes.data() + done, bytes.size() - done);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0)
        written = false;
      else
        done += static_cast<std::size_t>(put);
    }
    const int error = errno;
    if (out >= 0 && ::close(out) != 0) written = false;
    if (!written) {
      problem(label, "cannot be staged (" + errno_text(error) + ")");
      return;
    }
    result_.files.push_back(to);
  }

  /// Copies the folder \p from into the existing folder \p to, recursively.
  void copy_dir(const fs::path& from, const fs::path& to, const std::string& label, int depth) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path());
    if (ec) {
      problem(label, "cannot be read (" + ec.message() + ")");
      return;
    }
    std::sort(entries.begin(), entries.end());
    for (const fs::path& entry : entries) {
      if (stopped_) return;
      const std::string name = entry.filename().string();
      const std::string entry_label = label + "/" + inert_name(name, 200);
      if (++entries_ > limits_.max_files) {
        problem(label,
                fmt::format("has too many files and folders (more than {})", limits_.max_files));
        stopped_ = true;
        return;
      }
      if (unusual_name(name)) {
        problem(entry_label,
                "has an unusual character in its name (a control or bidirectional character, bytes "
                "that are not UTF-8, or a backslash)");
        continue;
      }
      const fs::file_status status = fs::symlink_status(entry, ec);
      if (ec) {
        problem(entry_label, "cannot be read (" + ec.message() + ")");
        continue;
      }
      switch (status.type()) {
        case fs::file_type::symlink:
          problem(entry_label, "is a symbolic link" + link_target_text(entry) +
                                   "; a submission may contain only regular files and folders");
          break;
        case fs::file_type::directory:
          if (depth >= limits_.max_depth) {
            problem(entry_label, fmt::format("folders nested too deeply (more than {} levels)",
                                             limits_.max_depth));
            break;
          }
          if (!fs::create_directory(to / name, ec) && ec) {
            problem(entry_label, "cannot be staged (" + ec.message() + ")");
            break;
          }
          copy_dir(entry, to / name, entry_label, depth + 1);
          break;
        case fs::file_type::regular:
          copy_file(entry, to / name, entry_label);
          break;
        default:
          problem(entry_label, "is not a regular file (" + kind_text(status.type()) +
                                   "); a submission may contain only regular files and folders");
      }
    }
  }

  void problem(const std::string& label, const std::string& why) {
    result_.problems.push_back(label + ": " + why);
  }

 private:
  StageLimits limits_;
  StageResult& result_;
  bool refuse_hard_links_;
  std::uintmax_t total_bytes_ = 0;
  std::size_t entries_ = 0;
  bool stopped_ = false;
};

/// Empties \p dir (never following links: remove_all removes a link, not its target).
void empty_folder(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    remove_all_quietly(it->path());
}

}  // namespace

std::string link_above(const fs::path& lab_dir) {
  std::error_code ec;
  const fs::path full = fs::absolute(lab_dir, ec).lexically_normal();
  fs::path walked;
  for (auto it = full.begin(); it != full.end(); ++it) {
    walked /= *it;
    if (std::next(it) == full.end() || it->empty() || *it == walked.root_path()) continue;
    if (fs::symlink_status(walked, ec).type() == fs::file_type::symlink)
      return fmt::format(
          "the folder {} that holds it is a symbolic link{}; a submission must be its own "
          "folders and regular files, and nothing is read through a link",
          inert_name(it->string()), link_target_text(walked));
  }
  return "";
}

void refuse_linked_submission(const fs::path& submission) {
  // lstat() of "mallory/" follows the link: the name is looked at without its trailing slash.
  fs::path named = submission.lexically_normal();
  if (!named.has_filename() && named.has_parent_path()) named = named.parent_path();
  std::error_code ec;
  if (fs::symlink_status(named, ec).type() != fs::file_type::symlink) return;
  throw ConfigError(fmt::format(
      "the submission folder {} is a symbolic link{}: a submission must be its own folder of "
      "regular files, so none of its labs is graded",
      inert_name(named.filename().string()), link_target_text(named)));
}

std::string StageResult::describe() const {
  if (problems.empty())
    return fmt::format("staged {} file{}", files.size(), files.size() == 1 ? "" : "s");
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
  return text;
}

const std::vector<std::string>& contract_header_names() {
  static const std::vector<std::string> names = {"lab.cuh", "cuda_check.cuh", "multi_pass.cuh",
                                                 "not_implemented.hpp"};
  return names;
}

StageResult stage_lab(const fs::path& submission_lab_dir, const fs::path& staging_lab_dir,
                      const StageLimits& limits) {
  StageResult result;
  Copier copier(limits, result, /*refuse_hard_links=*/true);
  const std::string label = submission_lab_dir.filename().string();
  std::error_code ec;

  const fs::file_status source = fs::symlink_status(submission_lab_dir, ec);
  if (source.type() == fs::file_type::not_found) {
    copier.problem(label, "does not exist");
    return result;
  }
  if (source.type() == fs::file_type::symlink) {
    copier.problem(label, "is a symbolic link" + link_target_text(submission_lab_dir) +
                              "; a submission may contain only regular files and folders");
    return result;
  }
  if (const std::string above = link_above(submission_lab_dir); !above.empty()) {
    copier.problem(label, above);
    return result;
  }
  if (source.type() != fs::file_type::directory) {
    copier.problem(label, "is not a folder");
    return result;
  }

  const fs::file_status staging = fs::symlink_status(staging_lab_dir, ec);
  if (staging.type() == fs::file_type::not_found) {
    fs::create_directories(staging_lab_dir, ec);
    if (ec) {
      copier.problem(staging_lab_dir.string(),
                     "cannot create the staging folder (" + ec.message() + ")");
      return result;
    }
  } else if (staging.type() != fs::file_type::directory) {
    copier.problem(staging_lab_dir.string(), "the staging folder is not a folder");
    return result;
  } else if (!is_empty_dir(staging_lab_dir)) {
    copier.problem(staging_lab_dir.string(), "the staging folder is not empty");
    return result;
  }

  copier.copy_dir(submission_lab_dir, staging_lab_dir, label, 0);
  result.ok = result.problems.empty();
  if (!result.ok) {
    empty_folder(staging_lab_dir);
    result.files.clear();
  }
  return result;
}

StageResult stage_contract_headers(const fs::path& course_root, const fs::path& staging_include_dir,
                                   const std::vector<std::string>& headers) {
  StageResult result;
  // Course files: hard links are not the student's doing there (some checkouts share them).
  Copier copier(StageLimits{}, result, /*refuse_hard_links=*/false);
  const fs::path from = course_root / "common" / "include" / "reduce";
  const fs::path to = staging_include_dir / "reduce";
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) {
    copier.problem(to.string(), "cannot create the staging folder (" + ec.message() + ")");
    return result;
  }
  for (const std::string& name : headers) {
    const std::string label = "common/include/reduce/" + name;
    if (name.empty() || name == "." || name == ".." || contains(name, "/")) {
      copier.problem(label, "is not the name of a header");
      continue;
    }
    const fs::file_status status = fs::symlink_status(from / name, ec);
    if (status.type() == fs::file_type::symlink) {
      copier.problem(label, "is a symbolic link");
      continue;
    }
    if (status.type() != fs::file_type::regular) {
      copier.problem(label, status.type() == fs::file_type::not_found ? "does not exist"
                                                                      : "is not a regular file");
      continue;
    }
    copier.copy_file(from / name, to / name, label);
  }
  result.ok = result.problems.empty();
  return result;
}

}  // namespace reduce::grade
