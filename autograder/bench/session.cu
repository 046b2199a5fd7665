// The run's state (session.cuh): its key, the lab processes and the timed inputs they share.
#include "session.cuh"

#include "labs.cuh"

#include <cstdlib>
#include <random>
#include <string>
#include <utility>

namespace reduce::bench {
namespace {

/// REDUCE_SEED, else a fresh key.
std::uint64_t read_seed() {
  const char* env = std::getenv("REDUCE_SEED");
  if (env != nullptr) return std::stoull(env, nullptr, 0);
  std::random_device device;  // not the clock: a fresh run's key is not to be guessed either
  return std::uint64_t{device()} << 32 ^ device();
}

}  // namespace

BenchSession::BenchSession()
    : seed_(read_seed()), graded_rng_(reduce::benchmark_stream(seed_, "graded")) {}

std::shared_ptr<Runner> BenchSession::graded_runner() {
  if (!graded_runner_) {
    RunnerOptions options = RunnerOptions::from_environment();
    options.libraries = library_paths(graded_entries());
    graded_runner_ = std::make_shared<Runner>(std::move(options));
  }
  return graded_runner_;
}

std::shared_ptr<Runner> BenchSession::reference_runner() {
  if (reference_entries().empty()) return nullptr;
  if (!reference_runner_) {
    RunnerOptions options = RunnerOptions::from_environment();
    options.libraries = library_paths(reference_entries());
    options.prefix.clear();  // the course's own code: the sandbox is for the labs graded
    reference_runner_ = std::make_shared<Runner>(std::move(options));
  }
  return reference_runner_;
}

void BenchSession::end_references() {
  if (!reference_runner_ || references_ended_) return;
  references_ended_ = true;
  reference_runner_->stop();
}

TimedArrays BenchSession::timed_arrays(Runner& runner, std::size_t n, std::size_t segments) {
  HeldArrays& held = held_;
  const int count = timed_input_count(runner, n);
  const bool reusable = held.runner == &runner && held.starts == runner.starts() &&
                        held.bytes != 0 && runner.timed_input_bytes() == held.bytes &&
                        static_cast<int>(held.arrays.inputs.size()) == count && held.n >= n &&
                        held.segments >= segments;
  if (!reusable) {
    held = HeldArrays{};
    held.arrays.inputs = runner.allocate_timed_inputs(n, count, segments);
    held.arrays.offsets = runner.timed_offsets();
    held.runner = &runner;
    held.starts = runner.starts();
    held.bytes = runner.timed_input_bytes();
    held.n = n;
    held.segments = segments;
  }
  return held.arrays;
}

}  // namespace reduce::bench
