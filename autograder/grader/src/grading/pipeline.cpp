#include <reduce_grade/grading/pipeline.hpp>
#include <reduce_grade/processes/process.hpp>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace reduce::grade {

namespace {

/// The niceness of the threads that build submissions ahead (and of every process they start).
constexpr int kBuildNice = 10;

/// The CPUs this process may run on, ascending.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

/// Runs the calling thread, and every process it starts from now on, on \p cpus only; false
/// where the host refuses.
bool pin_calling_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return ::sched_setaffinity(0, sizeof(set), &set) == 0;  // 0: the calling thread
}

/// One submission's build, done ahead of its turn on a GPU.
struct Pending {
  std::optional<PreparedSubmission> prepared;
  std::string error;
};

/// The state grade_pipeline() shares between its workers; every member function but run()
/// and finish() is called under mutex_ or before the workers start.
class Pipeline {
 public:
  Pipeline(std::size_t count, int build_ahead, std::size_t workers, const Course& course,
           const Rubric& rubric, const GpuProbe& gpu, Progress& progress, SharedCourse& shared,
           const PipelineCallbacks& callbacks)
      : count_(count),
        workers_(workers),
        window_(static_cast<std::size_t>(std::max(build_ahead, 0)) + workers),
        policy_(build_ahead > 0 || workers > 1 ? std::launch::async : std::launch::deferred),
        course_(course),
        rubric_(rubric),
        gpu_(gpu),
        progress_(progress),
        shared_(shared),
        callbacks_(callbacks),
        building_(count) {}

  /// One worker: takes the next item, waits for its build, grades it on \p device, on the CPUs
  /// \p cpus (empty: wherever the process may run). Never throws (it may be a std::thread's
  /// body): what escapes stops the run (clean_up() says it).
  void run(const std::string& device, const std::vector<int>& cpus = {}) {
    const std::string cpu_text =
        !cpus.empty() && pin_calling_thread(cpus) ? cpu_list_text(cpus) : std::string();
    try {
      for (;;) {
        std::size_t i = 0;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (stopped_ || next_ >= count_) return;
          i = next_++;
          start_more();
        }
        finish(i, building_[i].get(), device, cpu_text);
      }
    } catch (...) {
      const std::string why = handled_exception_message();
      std::lock_guard<std::mutex> lock(mutex_);
      stop(why);
    }
  }

  /// Removes the builds done ahead for items never run; throws when the run was stopped (a
  /// ConfigError, or std::runtime_error for an internal error).
  void clean_up() {
    for (std::size_t i = next_; i < started_; ++i) {
      if (!building_[i].valid()) continue;
      Pending unused = building_[i].get();
      if (unused.prepared && unused.prepared->temporary_build)
        remove_all_quietly(unused.prepared->build_dir);
    }
    if (!stopped_) return;
    if (is_internal_error(stop_reason_)) throw std::runtime_error(stop_reason_);
    throw ConfigError(stop_reason_);
  }

 private:
  Pending prepare(std::size_t i) {
    Pending p;
    if (policy_ == std::launch::async) {  // a thread of its own, never a GPU worker's
      // A build may be started by a worker pinned to its GPU's CPUs: builds use them all, at a
      // lower priority (nice 10, which its compilers inherit), so that a benchmark's process
      // on the same CPUs keeps its time: burners on a benchmark's own CPUs halve its speed.
      if (!all_cpus_.empty()) pin_calling_thread(all_cpus_);
      ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kBuildNice);
    }
    try {
      GradeOptions options;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        options = callbacks_.options(i);
      }
      options.course_build = shared_.get();
      p.prepared = prepare_submission(course_, rubric_, options, gpu_, progress_);
    } catch (...) {
      p.error = handled_exception_message();
    }
    return p;
  }

  /// Stops the run (under the lock): no item starts after this one.
  void stop(const std::string& why) {
    if (!stopped_) stop_reason_ = why;
    stopped_ = true;
  }

  /// Whatever a submission left behind after its grading threw: its processes, its build.
  static void abandon(PreparedSubmission& p) {
    kill_stray_processes();
    if (p.temporary_build && !p.options.keep_build) remove_all_quietly(p.build_dir);
  }

  void start_more() {  // under the lock
    while (started_ < count_ && started_ < next_ + window_) {
      building_[started_] = std::async(policy_, &Pipeline::prepare, this, started_);
      ++started_;
    }
  }

  void finish(std::size_t i, Pending current, const std::string& device, const std::string& cpus) {
    std::optional<GradeReport> report;
    std::string error = current.error;
    bool withheld = false;
    if (current.prepared) {
      current.prepared->options.cuda_device = device;
      current.prepared->options.cpus = cpus;
      try {
        report = finish_submission(*current.prepared, course_, rubric_, gpu_, progress_);
      } catch (const SubmissionVoid& e) {
        error = e.what();
        withheld = true;
      } catch (...) {
        error = handled_exception_message();
        abandon(*current.prepared);
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      if (report) {
        try {
          callbacks_.report(i, *report);
        } catch (...) {  // this report could not be taken: the item is not graded
          callbacks_.error(i, handled_exception_message(), false);
        }
      } else {
        callbacks_.error(i, error, withheld);
      }
      shared_.restore(progress_, workers_ == 1);
    } catch (const std::exception& e) {  // no gradebook row can be written, the course changed
      stop(e.what());
    } catch (...) {
      stop(handled_exception_message());
    }
  }

  const std::size_t count_, workers_, window_;
  const std::launch policy_;
  const Course& course_;
  const Rubric& rubric_;
  const GpuProbe& gpu_;
  Progress& progress_;
  SharedCourse& shared_;
  const PipelineCallbacks& callbacks_;
  std::mutex mutex_;  // the queue and the callbacks
  std::vector<std::future<Pending>> building_;
  std::size_t started_ = 0, next_ = 0;
  const std::vector<int> all_cpus_ = allowed_cpus();
  bool stopped_ = false;
  std::string stop_reason_;
};

}  // namespace

void grade_pipeline(std::size_t count, int build_ahead, const std::vector<std::string>& gpus,
                    const Course& course, const Rubric& rubric, const GpuProbe& gpu,
                    Progress& progress, SharedCourse& shared, const PipelineCallbacks& callbacks) {
  const std::size_t workers = std::max<std::size_t>(1, gpus.size());
  Pipeline pipeline(count, build_ahead, workers, course, rubric, gpu, progress, shared, callbacks);
  if (workers == 1) {
    pipeline.run(gpus.empty() ? std::string() : gpus.front());
  } else {
    // Each distinct GPU's workers on a share of the CPUs of their own (a GPU named twice, as
    // in --gpus 0,0, shares its share); one GPU alone keeps every CPU.
    std::vector<std::string> distinct;
    for (const std::string& device : gpus)
      if (std::find(distinct.begin(), distinct.end(), device) == distinct.end())
        distinct.push_back(device);
    const std::vector<int> allowed = allowed_cpus();
    std::vector<std::thread> threads;
    for (const std::string& device : gpus) {
      const auto part = static_cast<std::size_t>(
          std::find(distinct.begin(), distinct.end(), device) - distinct.begin());
      const std::vector<int> cpus =
          distinct.size() > 1 ? cpu_share(allowed, part, distinct.size()) : std::vector<int>{};
      threads.emplace_back([&pipeline, device, cpus] { pipeline.run(device, cpus); });
    }
    for (std::thread& t : threads) t.join();
  }
  pipeline.clean_up();
}

}  // namespace reduce::grade
