#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/gpu_share.hpp>
#include <reduce_grade/processes/process.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

namespace reduce::grade {

void TimingLock::lock() {
  std::unique_lock<std::mutex> lock(mutex_);
  ++waiting_alone_;
  changed_.wait(lock, [&] { return !alone_ && sharing_ == 0; });
  --waiting_alone_;
  alone_ = true;
}

void TimingLock::unlock() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    alone_ = false;
  }
  changed_.notify_all();
}

void TimingLock::lock_shared() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !alone_ && waiting_alone_ == 0; });
  ++sharing_;
}

void TimingLock::unlock_shared() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    --sharing_;
  }
  changed_.notify_all();
}

TimingLock& timing_lock(const std::string& cuda_device, bool host_wide) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TimingLock>> locks;
  const std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<TimingLock>& slot = locks[host_wide ? std::string("host") : "gpu " + cuda_device];
  if (!slot) slot = std::make_unique<TimingLock>();
  return *slot;
}

std::vector<int> cpu_share(const std::vector<int>& allowed, std::size_t part, std::size_t parts) {
  if (allowed.empty() || parts == 0) return allowed;
  if (parts > allowed.size()) return {allowed[part % allowed.size()]};
  const std::size_t begin = part * allowed.size() / parts;
  const std::size_t end = (part + 1) * allowed.size() / parts;
  return std::vector<int>(allowed.begin() + static_cast<std::ptrdiff_t>(begin),
                          allowed.begin() + static_cast<std::ptrdiff_t>(end));
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(cpus[i]) +
            (j > i ? "-" + std::to_string(cpus[j]) : "");
    i = j + 1;
  }
  return text;
}

namespace {

/// A private folder of this process, removed when the process ends.
class ProcessFolder {
 public:
  ProcessFolder() : path_(make_temp_dir("reduce-grade-slots-")) {}
  ~ProcessFolder() { remove_all_quietly(path_); }
  ProcessFolder(const ProcessFolder&) = delete;
  ProcessFolder& operator=(const ProcessFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

std::filesystem::path gpu_memory_slots(const std::string& cuda_device) {
  static const ProcessFolder folder;
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  const std::filesystem::path slots =
      folder.path() / ("memory-slots-gpu-" + (cuda_device.empty() ? "default" : cuda_device));
  std::error_code ec;
  std::filesystem::create_directories(slots, ec);
  return slots;
}

CheckerCounts checkers_for_memory(std::optional<std::uint64_t> total_bytes,
                                  const CheckerCounts& asked) {
  if (!total_bytes || asked.parallel_checks < 1) return asked;
  // To the nearest GiB first: an "8 GB" GPU reports 8188 MiB and still runs 4.
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const std::uint64_t rounded = (*total_bytes / gib + (*total_bytes % gib >= gib / 2)) * gib;
  const std::uint64_t fit = std::max<std::uint64_t>(2, rounded / kGpuBytesPerChecker);
  const int checks = static_cast<int>(std::min<std::uint64_t>(asked.parallel_checks, fit));
  // Rounded down: the tests' checkers, which hold the large inputs, keep their share.
  const int sanitizer = std::max(1, asked.sanitizer_checkers * checks / asked.parallel_checks);
  return {checks, sanitizer};
}

std::optional<std::uint64_t> usable_gpu_memory(std::optional<std::uint64_t> total_bytes,
                                               double limit_gib) {
  if (!(limit_gib > 0)) return total_bytes;
  const auto limit = static_cast<std::uint64_t>(std::min(limit_gib, 1e9) * (1 << 30));
  return total_bytes ? std::min(*total_bytes, limit) : limit;
}

std::string checkers_text(std::optional<std::uint64_t> total_bytes, const CheckerCounts& asked,
                          const CheckerCounts& used) {
  const std::string why =
      total_bytes ? fmt::format("{:.1f} GiB of GPU memory: one per {} GiB, at most the rubric's {}",
                                static_cast<double>(*total_bytes) / (1 << 30),
                                kGpuBytesPerChecker >> 30, asked.parallel_checks)
                  : "the rubric's: the GPU's memory could not be read";
  return fmt::format("{} processes at once, {} of them the sanitizer's ({})", used.parallel_checks,
                     used.sanitizer_checkers, why);
}

std::optional<std::uint64_t> gpu_total_memory(const std::string& cuda_device) {
  const std::optional<std::filesystem::path> smi = find_program("nvidia-smi");
  if (!smi) return std::nullopt;
  // The checkers inherit the grader's CUDA_VISIBLE_DEVICES unless the grading names a GPU.
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string device = !cuda_device.empty() ? cuda_device
                             : visible != nullptr ? trim(visible)
                                                  : "";
  ProcessSpec spec;
  spec.argv = {smi->string(), "--query-gpu=memory.total", "--format=csv,noheader,nounits"};
  if (!device.empty()) spec.argv.push_back("--id=" + device);
  spec.timeout_s = 60;
  spec.output_cap = 1 << 16;
  const ProcessResult r = run_process(spec);
  if (!r.succeeded()) return std::nullopt;
  std::optional<std::uint64_t> smallest;
  for (const std::string& line : split_lines(r.output)) {
    const std::string text = trim(line);
    if (text.empty()) continue;
    const std::optional<std::uint64_t> mib = parse_count(text, std::uint64_t{1} << 40);
    if (!mib) return std::nullopt;
    smallest = std::min(smallest.value_or(*mib), *mib);
  }
  if (!smallest) return std::nullopt;
  return *smallest << 20;
}

}  // namespace reduce::grade
