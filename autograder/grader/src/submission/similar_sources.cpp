#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/similar_sources.hpp>
#include <reduce_grade/submission/staging.hpp>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <system_error>

namespace reduce::grade {
namespace {

/// The bytes of the regular file \p path, never through a link; nullopt when it is not one, or
/// is larger than \p max_bytes.
std::optional<std::string> read_regular(const fs::path& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st{};
  std::optional<std::string> bytes;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uintmax_t>(st.st_size) <= max_bytes) {
    bytes.emplace();
    char buffer[1 << 16];
    for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 || bytes->size() + static_cast<std::size_t>(got) > max_bytes) {
        bytes.reset();
        break;
      }
      bytes->append(buffer, static_cast<std::size_t>(got));
    }
  }
  ::close(fd);
  return bytes;
}

/// What a student changed in a lab folder, as one string that two folders share only when they
/// hold the same changed files: each file's relative path, size and bytes, in path order.
class Serializer {
 public:
  Serializer(const fs::path& stub, std::size_t max_bytes) : stub_(stub), max_bytes_(max_bytes) {}

  /// The changed files of \p lab_dir; nullopt when it is not comparable (missing, a link, a
  /// special file, too large).
  std::optional<std::string> operator()(const fs::path& lab_dir) {
    std::error_code ec;
    out_.clear();
    ok_ = fs::symlink_status(lab_dir, ec).type() == fs::file_type::directory &&
          link_above(lab_dir).empty();
    if (ok_) walk(lab_dir, "", 0);
    if (!ok_) return std::nullopt;
    return out_;
  }

 private:
  void walk(const fs::path& dir, const std::string& rel, int depth) {
    std::error_code ec;
    std::vector<fs::path> entries;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      entries.push_back(it->path());
    std::sort(entries.begin(), entries.end());
    ok_ = ok_ && !ec && depth <= 8;
    for (const fs::path& entry : entries) {
      if (!ok_) return;
      const std::string name = rel + entry.filename().string();
      const fs::file_type type = fs::symlink_status(entry, ec).type();
      if (type == fs::file_type::directory) {
        walk(entry, name + "/", depth + 1);
        continue;
      }
      const std::optional<std::string> bytes =
          type == fs::file_type::regular ? read_regular(entry, max_bytes_) : std::nullopt;
      ok_ = bytes && out_.size() + bytes->size() <= max_bytes_;
      if (!ok_ || read_regular(stub_ / name, max_bytes_) == bytes) continue;  // the stub's own
      out_ += fmt::format("{}{}{}", name, '\0', bytes->size());
      out_ += '\0';
      out_ += *bytes;
    }
  }

  fs::path stub_;
  std::size_t max_bytes_;
  std::string out_;
  bool ok_ = true;
};

/// FNV-1a, 64 bits: a bucket for each serialization; members are compared byte for byte after.
std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

}  // namespace

std::vector<SimilarGroup> find_similar_sources(
    const std::vector<std::pair<std::string, fs::path>>& trees,
    const std::vector<std::string>& labs, const fs::path& stubs, std::size_t max_bytes) {
  std::vector<SimilarGroup> groups;
  for (const std::string& lab : labs) {
    Serializer serialize(stubs / lab, max_bytes);
    // Only hashes are kept for the whole class; a bucket's members are read again to compare.
    std::map<std::uint64_t, std::vector<std::size_t>> buckets;
    for (std::size_t i = 0; i < trees.size(); ++i) {
      const std::optional<std::string> changed = serialize(trees[i].second / lab);
      if (changed && !changed->empty()) buckets[fnv1a(*changed)].push_back(i);
    }
    for (const auto& [hash, members] : buckets) {
      if (members.size() < 2) continue;
      std::vector<std::pair<std::string, std::vector<std::size_t>>> same;
      for (const std::size_t i : members) {
        const std::string changed = serialize(trees[i].second / lab).value_or("");
        auto it = std::find_if(same.begin(), same.end(),
                               [&](const auto& group) { return group.first == changed; });
        if (it == same.end()) {
          same.emplace_back(changed, std::vector<std::size_t>{});
          it = std::prev(same.end());
        }
        it->second.push_back(i);
      }
      for (const auto& [changed, indices] : same) {
        if (indices.size() < 2 || changed.empty()) continue;
        SimilarGroup g{lab, {}};
        for (const std::size_t i : indices) g.students.push_back(trees[i].first);
        groups.push_back(g);
      }
    }
  }
  return groups;
}

std::vector<std::pair<std::string, fs::path>> batch_trees(
    const Course& course, const fs::path& folder, const std::vector<std::string>& students) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(folder, ec), ec);
  std::vector<std::pair<std::string, fs::path>> trees;
  for (const std::string& student : students)
    if (fs::symlink_status(real / student, ec).type() == fs::file_type::directory)
      trees.emplace_back(student, resolve_submission_tree(course, real / student));
  return trees;
}

std::string similar_sources_text(const std::vector<SimilarGroup>& groups, std::size_t students) {
  std::string out = fmt::format(
      "# Lab folders whose changed files (those not identical to the course's stub) are "
      "byte-identical across students,\n# {} submission{} compared. A hint to look at, never a "
      "grade: a group may be a shared helper or a coincidence.\n",
      students, students == 1 ? "" : "s");
  if (groups.empty()) out += "no identical lab sources\n";
  for (const SimilarGroup& g : groups) {
    std::vector<std::string> names;
    for (const std::string& s : g.students) names.push_back(inert_name(s));
    out += g.lab + ": " + join(names, ", ") + "\n";
  }
  return out;
}

}  // namespace reduce::grade
