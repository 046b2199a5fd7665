#include <reduce_grade/pipeline.hpp>

#include <algorithm>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

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

TimingLock& host_timing_lock() {
  static TimingLock lock;
  return lock;
}

namespace {

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

  /// One worker: takes the next item, waits for its build, grades it on \p device.
  void run(const std::string& device) {
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopped_ || next_ >= count_) return;
        i = next_++;
        start_more();
      }
      finish(i, building_[i].get(), device);
    }
  }

  /// Removes the builds done ahead for items never run; throws when the run was stopped.
  void clean_up() {
    for (std::size_t i = next_; i < started_; ++i) {
      Pending unused = building_[i].get();
      if (unused.prepared && unused.prepared->temporary_build)
        remove_all_quietly(unused.prepared->build_dir);
    }
    if (stopped_) throw ConfigError(stop_reason_);
  }

 private:
  Pending prepare(std::size_t i) {
    Pending p;
    try {
      GradeOptions options;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        options = callbacks_.options(i);
      }
      options.course_build = shared_.get();
      p.prepared = prepare_submission(course_, rubric_, options, gpu_, progress_);
    } catch (const std::exception& e) {
      p.error = e.what();
    }
    return p;
  }

  void start_more() {  // under the lock
    while (started_ < count_ && started_ < next_ + window_) {
      building_[started_] = std::async(policy_, &Pipeline::prepare, this, started_);
      ++started_;
    }
  }

  void finish(std::size_t i, Pending current, const std::string& device) {
    std::optional<GradeReport> report;
    std::string error = current.error;
    bool withheld = false;
    if (current.prepared) {
      current.prepared->options.cuda_device = device;
      try {
        report = finish_submission(*current.prepared, course_, rubric_, gpu_, progress_);
      } catch (const SubmissionVoid& e) {
        error = e.what();
        withheld = true;
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (report)
      callbacks_.report(i, *report);
    else
      callbacks_.error(i, error, withheld);
    try {
      shared_.restore(progress_, workers_ == 1);
    } catch (const std::exception& e) {
      stopped_ = true;
      stop_reason_ = e.what();
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
    std::vector<std::thread> threads;
    for (const std::string& device : gpus)
      threads.emplace_back([&pipeline, device] { pipeline.run(device); });
    for (std::thread& t : threads) t.join();
  }
  pipeline.clean_up();
}

}  // namespace reduce::grade
