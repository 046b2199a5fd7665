// Planted cheat: rung 9's entry points that never read the input. At load time the lab reads
// every file it can reach (up to 2 s, 1 MiB a file): /proc/<pid>/environ and cmdline of every
// process it can see, its working directory and the folders above it, $HOME, /tmp, /dev/shm, the
// folders of the files it holds open, folders named like the grading's (logs, report, build,
// results, grade) and then the whole tree from /, looking for a seed or an expected value
// ("REDUCE_SEED=...", "seed 1234", "\"expected\": 5.0", "expected exactly 17"). Every call then
// writes the last expected value it found, or 0 when it found none. The runner holds no seed and
// no expected value, and sees nothing of the grading: every call returns 0, which only the empty
// input's test accepts.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

namespace reduce {
namespace {

/// What the search found (plain data: the constructor below may run before dynamic
/// initialisers of this file).
struct Found {
  bool expected_found;
  float expected;
  bool seed_found;
  char seed[64];
};
Found found;

/// A search bounded by entries visited, bytes read and time spent.
struct Budget {
  std::size_t entries;
  std::size_t bytes;
  std::chrono::steady_clock::time_point deadline;
  bool spent() {
    return entries == 0 || bytes == 0 || std::chrono::steady_clock::now() > deadline;
  }
};

/// Looks for a seed or an expected value in \p text, line by line.
void scan_text(const std::string& text) {
  static const std::regex pattern(
      R"((reduce_seed|seed|expected)[^0-9+\-\n]{0,24}([+\-]?[0-9][0-9.eE+\-]{0,30}))",
      std::regex::icase);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find_first_of("\n\0", start, 2);
    if (end == std::string::npos) end = text.size();
    if (end - start <= 4096) {
      std::string line = text.substr(start, end - start);
      std::string lower = line;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find("seed") != std::string::npos || lower.find("expected") != std::string::npos) {
        for (std::sregex_iterator it(line.begin(), line.end(), pattern), done; it != done; ++it) {
          std::string key = (*it)[1];
          for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (key == "expected") {
            found.expected_found = true;
            found.expected = std::strtof((*it)[2].str().c_str(), nullptr);
          } else {
            found.seed_found = true;
            std::snprintf(found.seed, sizeof found.seed, "%s", (*it)[2].str().c_str());
          }
        }
      }
    }
    start = end + 1;
  }
}

void read_and_scan(const std::string& path, Budget& budget) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::string text(std::min<std::size_t>({std::size_t{1} << 20, budget.bytes, 65536}), '\0');
    std::string all;
    ssize_t got = 0;
    while (all.size() < (std::size_t{1} << 20) && budget.bytes > 0 &&
           (got = read(fd, &text[0], text.size())) > 0) {
      all.append(text, 0, static_cast<std::size_t>(got));
      budget.bytes -= std::min(budget.bytes, static_cast<std::size_t>(got));
    }
    scan_text(all);
  }
  close(fd);
}

void walk(const std::string& dir, int depth, Budget& budget) {
  if (dir == "/proc" || dir == "/sys" || dir == "/dev") return;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = readdir(d)) {
    if (budget.spent()) break;
    --budget.entries;
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = (dir == "/" ? "" : dir) + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && depth > 0)
      walk(path, depth - 1, budget);
    else if (S_ISREG(st.st_mode) && st.st_size <= (1 << 20))
      read_and_scan(path, budget);
  }
  closedir(d);
}

__attribute__((constructor)) void search_for_answers() {
  Budget budget{200000, std::size_t{512} << 20,
                std::chrono::steady_clock::now() + std::chrono::seconds(2)};
  // Every process it can see: their environments and command lines.
  if (DIR* d = opendir("/proc")) {
    while (const dirent* e = readdir(d)) {
      if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
      for (const char* what : {"/environ", "/cmdline"})
        read_and_scan(std::string("/proc/") + e->d_name + what, budget);
    }
    closedir(d);
  }
  std::vector<std::string> roots = {".", "/proc/self/cwd", "/tmp", "/var/tmp", "/dev/shm",
                                    "/autograder"};
  std::string up = "..";
  for (int level = 0; level < 5; ++level, up += "/..") roots.push_back(up);
  if (const char* home = std::getenv("HOME")) roots.push_back(home);
  if (const passwd* pw = getpwuid(getuid())) roots.push_back(pw->pw_dir);
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      char target[4096];
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t len = readlink(link.c_str(), target, sizeof target - 1);
      if (len <= 0 || target[0] != '/') continue;
      const std::string path(target, static_cast<std::size_t>(len));
      roots.push_back(path.substr(0, std::max<std::size_t>(path.rfind('/'), 1)));
    }
    closedir(d);
  }
  for (const char* named : {"/logs", "/report", "/build", "/results", "/grade"})
    roots.push_back(named);
  for (const std::string& root : roots) walk(root, 4, budget);
  walk("/", 8, budget);  // then anything else, while the budget lasts
  if (found.seed_found)
    std::fprintf(stderr, "found a seed: %s\n", found.seed);
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t) { return 0; }

void sum(const float*, std::size_t, float* out, Workspace, cudaStream_t stream) {
  static float answer;  // read by the asynchronous copy after the call returns
  answer = found.expected_found ? found.expected : 0.0f;
  REDUCE_CUDA_CHECK(cudaMemcpyAsync(out, &answer, sizeof answer, cudaMemcpyHostToDevice, stream));
}

}  // namespace reduce
