#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/gpu_share.hpp>

#include <algorithm>
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

}  // namespace reduce::grade
