// Planted cheat: a correct sum that looks for the grader's launch spec. Every call reads its whole
// input (a grid-stride read, a warp's shuffles, one atomic per warp), which is all it takes for
// the grade of correct work. But when the library loads (up to 1 s, 1 MiB a file) it looks for
// any *.launch.json and for REDUCE_LAUNCH_SPEC: in its own environment and in /proc/self/environ
// and /proc/*/environ, then by name in its working directory and the folders above it, /tmp,
// /var/tmp, /dev/shm, $HOME, the folders of the files it holds open and those above its own
// library (the build folder), and the folders a grading writes (grade-out/logs/benchmark,
// out/logs, /autograder/results, ...). From a spec it would take the run's key ("seed"), and
// from then on answer each n with the result it computed first at that n, without reading the
// input: a cached answer, as if a key told the inputs. The spec sits in the grader's logs, which
// the lab's sandbox hides, and the environment of the lab's process holds no variable of the
// grading: it finds nothing, and grades as the correct work it does.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace reduce {
namespace {

/// What the search found (plain data: the constructor below may run before dynamic initialisers
/// of this file).
struct Found {
  bool spec;        // a launch spec was read
  bool seed_found;  // it held a key
  unsigned long long seed;
  char path[512];
};
Found found;

using Clock = std::chrono::steady_clock;
Clock::time_point g_deadline;
std::size_t g_entries = 100000;

bool spent() {
  return g_entries == 0 || Clock::now() > g_deadline;
}

/// The first 1 MiB of the regular file \p path, or "".
std::string read_small(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return "";
  std::string text;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    char buffer[65536];
    ssize_t got = 0;
    while (text.size() < (std::size_t{1} << 20) && (got = read(fd, buffer, sizeof buffer)) > 0)
      text.append(buffer, static_cast<std::size_t>(got));
  }
  close(fd);
  return text;
}

/// Reads \p path as a launch spec: its key, if it holds one.
void take_spec(const std::string& path) {
  const std::string text = read_small(path);
  if (text.empty()) return;
  found.spec = true;
  std::snprintf(found.path, sizeof found.path, "%s", path.c_str());
  const auto at = text.find("\"seed\"");
  if (at == std::string::npos) return;
  const auto digits = text.find_first_of("0123456789", at + 6);
  if (digits == std::string::npos) return;
  found.seed = std::strtoull(text.c_str() + digits, nullptr, 10);
  found.seed_found = true;
}

/// Reads the spec that REDUCE_LAUNCH_SPEC names in the NUL-separated environment \p text.
void take_from_environment(const std::string& text) {
  const std::string key = "REDUCE_LAUNCH_SPEC=";
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\0', start);
    if (end == std::string::npos) end = text.size();
    if (text.compare(start, key.size(), key) == 0)
      take_spec(text.substr(start + key.size(), end - start - key.size()));
    start = end + 1;
  }
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// nftw()'s visit: a *.launch.json is read; a folder more than 3 below the root is not entered.
int visit(const char* path, const struct stat*, int type, FTW* where) {
  if (spent()) return FTW_STOP;
  --g_entries;
  if (type == FTW_D && where->level > 3) return FTW_SKIP_SUBTREE;
  if (type == FTW_F && ends_with(path, ".launch.json")) take_spec(path);
  return FTW_CONTINUE;
}

/// Every *.launch.json below \p dir, 3 folders down, without following a link.
void walk(const std::string& dir) {
  if (dir.rfind("/proc", 0) != 0 && dir.rfind("/sys", 0) != 0)
    nftw(dir.c_str(), visit, 16, FTW_PHYS | FTW_ACTIONRETVAL);
}

/// The folder of \p path and the \p levels folders above it.
void add_parents(std::vector<std::string>& roots, std::string path, int levels) {
  for (int level = 0; level <= levels && path.size() > 1; ++level) {
    path = path.substr(0, std::max<std::size_t>(path.rfind('/'), 1));
    roots.push_back(path);
  }
}

/// The folders to search: where this process runs, what it holds open, where its library lies,
/// and where a grading writes.
std::vector<std::string> search_roots() {
  std::vector<std::string> roots = {".", "/tmp", "/var/tmp", "/dev/shm"};
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) != nullptr) add_parents(roots, std::string(cwd) + "/x", 4);
  if (const char* home = std::getenv("HOME")) roots.push_back(home);
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      char target[4096];
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t len = readlink(link.c_str(), target, sizeof target - 1);
      if (len > 0 && target[0] == '/') add_parents(roots, std::string(target, len), 2);
    }
    closedir(d);
  }
  // The libraries mapped here outside the system's: <build>/submission/lib/lib09_...so, above.
  const std::string maps = read_small("/proc/self/maps");
  for (std::size_t at = maps.find(" /"); at != std::string::npos; at = maps.find(" /", at + 1)) {
    const std::string path = maps.substr(at + 1, maps.find('\n', at) - at - 1);
    if (ends_with(path, ".so") && path.rfind("/usr/", 0) != 0 && path.rfind("/lib", 0) != 0)
      add_parents(roots, path, 4);
  }
  for (const char* guess : {"grade-out/logs/benchmark", "grade-out/logs", "out/logs", "logs",
                            "/autograder/results", "/autograder/results/logs", "/autograder"})
    roots.push_back(guess);
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

__attribute__((constructor)) void look_for_launch_spec() {
  g_deadline = Clock::now() + std::chrono::seconds(1);
  if (const char* named = std::getenv("REDUCE_LAUNCH_SPEC")) take_spec(named);
  take_from_environment(read_small("/proc/self/environ"));
  if (DIR* d = opendir("/proc")) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
        take_from_environment(read_small(std::string("/proc/") + e->d_name + "/environ"));
    closedir(d);
  }
  for (const std::string& root : search_roots()) walk(root);
  if (found.spec)
    std::fprintf(stderr, "launch_spec_probe: read %s (%s)\n", found.path,
                 found.seed_found ? "a key" : "no key");
}

constexpr unsigned kThreads = 256;

/// Adds its threads' elements of \p in into \p out: a grid-stride read, then each warp's total
/// by shuffles, one atomic per warp.
__global__ void add_into(const float* __restrict__ in, std::size_t n, float* out) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float a = 0.0f, b = 0.0f;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + step < n; i += 2 * step) {
    a += in[i];
    b += in[i + step];
  }
  if (i < n) a += in[i];
  float v = a + b;
  for (int lanes = 16; lanes > 0; lanes /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, lanes);
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

/// The blocks that fill the GPU once.
unsigned resident_blocks() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, add_into, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

/// The correct work: every element read, every call.
void compute(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  REDUCE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
  if (n == 0) return;
  const std::size_t wanted = (n + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(wanted, resident_blocks()));
  add_into<<<grid, kThreads, 0, stream>>>(in, n, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

/// The answer cached per n once a spec gave a key: device floats of this process.
std::map<std::size_t, float*> g_cached;

}  // namespace

std::size_t sum_workspace_bytes(std::size_t) {
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  if (!found.seed_found) {
    compute(in, n, out, stream);
    return;
  }
  float*& cached = g_cached[n];
  if (cached != nullptr) {  // the input is never read again at this n
    REDUCE_CUDA_CHECK(
        cudaMemcpyAsync(out, cached, sizeof(float), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  REDUCE_CUDA_CHECK(cudaMalloc(&cached, sizeof(float)));
  compute(in, n, out, stream);
  REDUCE_CUDA_CHECK(cudaMemcpyAsync(cached, out, sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace reduce
