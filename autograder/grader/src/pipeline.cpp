#include <reduce_grade/pipeline.hpp>

#include <algorithm>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace reduce::grade {
namespace {

/// One submission's build, done ahead of its turn on a GPU.
struct Pending {
  std::optional<PreparedSubmission> prepared;
  std::string error;
};

}  // namespace

void grade_pipeline(std::size_t count, int build_ahead, const std::vector<std::string>& gpus,
                    const Course& course, const Rubric& rubric, const GpuProbe& gpu,
                    Progress& progress, SharedCourse& shared, const PipelineCallbacks& callbacks) {
  std::mutex mutex;  // the queue and the callbacks
  const auto prepare = [&](std::size_t i) {
    Pending p;
    try {
      GradeOptions options;
      {
        std::lock_guard<std::mutex> lock(mutex);
        options = callbacks.options(i);
      }
      options.course_build = shared.get();
      p.prepared = prepare_submission(course, rubric, options, gpu, progress);
    } catch (const std::exception& e) {
      p.error = e.what();
    }
    return p;
  };
  const std::size_t workers = std::max<std::size_t>(1, gpus.size());
  const std::size_t window = static_cast<std::size_t>(std::max(build_ahead, 0)) + workers;
  const auto policy = build_ahead > 0 || workers > 1 ? std::launch::async : std::launch::deferred;
  std::vector<std::future<Pending>> building(count);
  std::size_t started = 0, next = 0;
  bool stopped = false;
  std::string stop_reason;
  const auto start_more = [&] {  // under the lock
    while (started < count && started < next + window) {
      building[started] = std::async(policy, prepare, started);
      ++started;
    }
  };
  const auto worker = [&](const std::string& device) {
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (stopped || next >= count) return;
        i = next++;
        start_more();
      }
      Pending current = building[i].get();
      std::optional<GradeReport> report;
      std::string error = current.error;
      bool withheld = false;
      if (current.prepared) {
        current.prepared->options.cuda_device = device;
        try {
          report = finish_submission(*current.prepared, course, rubric, gpu, progress);
        } catch (const SubmissionVoid& e) {
          error = e.what();
          withheld = true;
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      if (report)
        callbacks.report(i, *report);
      else
        callbacks.error(i, error, withheld);
      try {
        shared.restore(progress, workers == 1);
      } catch (const std::exception& e) {
        stopped = true;
        stop_reason = e.what();
      }
    }
  };
  if (workers == 1) {
    worker(gpus.empty() ? std::string() : gpus.front());
  } else {
    std::vector<std::thread> threads;
    for (const std::string& device : gpus) threads.emplace_back(worker, device);
    for (std::thread& t : threads) t.join();
  }
  for (std::size_t i = next; i < started; ++i) {  // built ahead, never run
    Pending unused = building[i].get();
    if (unused.prepared && unused.prepared->temporary_build)
      remove_all_quietly(unused.prepared->build_dir);
  }
  if (stopped) throw ConfigError(stop_reason);
}

}  // namespace reduce::grade
