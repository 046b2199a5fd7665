/// \file
/// \brief The checker's side of a lab: a runner process that holds the lab, and guarded calls.
///
/// A LabRunner starts reduce_lab_runner (with one or several lab libraries of one submission,
/// each loaded when first called) with a clean environment (no seed, nothing of the
/// checker's), its own process group and its own output pipe, and forwards calls to it. Every
/// output and workspace the lab receives belongs to the checker and is surrounded by guard
/// bytes that are checked after every request. A runner that crashes, hangs, floods its output
/// or hits a CUDA error fails the call that was running; the next call starts a fresh runner.
#pragma once

#include <reduce_runner/protocol.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <cuda_runtime.h>

#include <sys/types.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce {
class ChildProcess;
}  // namespace reduce

namespace reduce::runner {

class TiledRange;

/// A call that did not complete: the runner died, hung, flooded its output, or a guard changed.
class RunnerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How to start a runner.
struct RunnerOptions {
  /// The lab libraries the runner may load, in order (use_library() picks one by its index).
  std::vector<std::string> libraries;
  std::string runner;               ///< the reduce_lab_runner executable
  std::vector<std::string> prefix;  ///< commands in front of the runner (sandbox, sanitizer)
  /// Words put after `prefix` in each repetition of the checker's tests (--gtest_repeat), one
  /// list per repetition: one checker process runs its tests under several sanitizer tools.
  std::vector<std::vector<std::string>> repetition_prefixes;
  /// Per repetition, where the sanitizer's report goes (empty: no report pipe). The runner's
  /// file descriptor kSanitizerLogFd is then a pipe that this process drains into that file
  /// (%n: the runner's number).
  std::vector<std::string> repetition_reports;
  double call_timeout_s = 120;  ///< one request's wall-clock limit
  /// How long a stopped runner may take to exit before it is killed. A sanitizer writes its
  /// summary as the runner exits, which takes seconds when many processes share the machine.
  double exit_grace_s = 1;
  std::size_t output_cap = std::size_t{4} << 20;  ///< bytes of runner output before "flood"

  /// Options from a launch spec's \p launch (reduce_vocabulary/launch_spec.hpp, read by its
  /// child): its prefix, each repetition's words and report, its call timeout and exit grace (0
  /// keeps the default), the runner built with the course; no library yet, and nothing from the
  /// environment.
  static RunnerOptions from_launch(const launch::RunnerLaunch& launch);
};

/// What the checker's clock and the runner's events said about one timed request.
struct TimedRun {
  double host_ms = 0;   ///< the checker's wall clock: request sent to reply and results read
  double event_ms = 0;  ///< the runner's CUDA events around the same calls (a second clock)
};

/// One lab library in a runner process.
class LabRunner {
 public:
  /// Bytes of guard after every output and workspace the lab receives.
  static constexpr std::size_t kGuardBytes = 64 * 1024;

  /// Starts nothing yet: the runner starts on the first call.
  explicit LabRunner(RunnerOptions options);
  ~LabRunner();
  LabRunner(const LabRunner&) = delete;
  LabRunner& operator=(const LabRunner&) = delete;

  /// The lab of this checker process, started with the options of configure_process() (without
  /// them: RunnerOptions::from_launch() of an empty launch, and no library).
  static LabRunner& of_process();

  /// The options of_process() starts with: the checker's, from its launch spec or its command
  /// line (checker_main.cpp), given once, before the process's first of_process().
  static void configure_process(RunnerOptions options);

  /// The lab's `<op>_workspace_bytes(n)`.
  std::size_t workspace_bytes(const std::string& op, std::size_t n);

  /// The lab's `<op>_workspace_bytes(n, segments)` of a segmented reduction (lab 17).
  std::size_t workspace_bytes(const std::string& op, std::size_t n, std::size_t segments);

  /// Calls the segmented reduction \p op once: segment s of \p in is [offsets[s],
  /// offsets[s + 1]) (\p offsets: segments + 1 device int64 values). Its \p segments results
  /// (captured in stream order) go to the caller's \p out on \p stream.
  void reduce_segments(const std::string& op, const float* in, std::size_t n,
                       const std::int64_t* offsets, std::size_t segments, float* out,
                       cudaStream_t stream);

  /// Calls \p op once on \p in and writes its result (the copy captured in stream order) to the
  /// caller's \p out on \p stream. The lab writes only into the checker's guarded buffers. An
  /// \p in inside a TiledRange of this process reaches the lab as a range of the runner's own
  /// with the same layout and a copy of the same tiles (never staged: set_stage_inputs()).
  void reduce(const std::string& op, const float* in, std::size_t n, void* out,
              cudaStream_t stream);

  /// Calls \p op once on each of \p inputs (device inputs of \p n floats in this process), in
  /// order, as reduce() calls it once: output and workspace poisoned (0xFF bytes) before every
  /// call, each result captured in stream order, the guards checked. The calls travel as one
  /// request per kMaxInputs inputs, so a test of many small inputs waits for the GPU a few times
  /// instead of several times per call (where other processes share the GPU, each wait is a
  /// time slice). Call k's result goes to \p results + k results of the operation's kind, on
  /// \p stream. Staged or tiled inputs go one call at a time, through reduce().
  /// \throws std::logic_error for an operation that does not return one float or one index
  void reduce_each(const std::string& op, const std::vector<const float*>& inputs, std::size_t n,
                   void* results, cudaStream_t stream);

  /// Lab 14's atomic_max_apply, with *address and old_values staged through guarded buffers.
  void atomic_max_apply(const float* values, std::size_t n, float* address, float* old_values,
                        cudaStream_t stream);

  /// Has the runner allocate \p count input arrays of \p n floats for timed calls, and returns
  /// them mapped into this process (to fill and change; valid until stop() or the next call,
  /// which frees them).
  std::vector<float*> allocate_timed_inputs(std::size_t n, int count);

  /// The same for a segmented reduction: also \p segments + 1 offsets in the runner, which
  /// timed_offsets() returns mapped (to fill).
  std::vector<float*> allocate_timed_inputs(std::size_t n, int count, std::size_t segments);

  /// Bytes of timed inputs (and offsets) the runner holds now: its next allocate_timed_inputs()
  /// frees them first, so they count as free when the next inputs are sized.
  std::size_t timed_input_bytes() const { return timed_bytes_; }

  /// The runner's offsets of allocate_timed_inputs(n, count, segments), mapped here.
  std::int64_t* timed_offsets() const { return timed_offsets_; }

  /// Calls \p op `calls` times, call k on timed input k % count (allocate_timed_inputs()), on
  /// the runner's stream, and times the request with the checker's clock. Results go to
  /// \p capture (device, one result per call, in stream order). Guards are checked afterwards;
  /// throws RunnerError.
  TimedRun run_timed(const std::string& op, int count, std::size_t n, int calls, void* capture);

  /// run_timed() of a segmented reduction over the runner's offsets: \p capture gets
  /// \p segments results per call.
  TimedRun run_timed(const std::string& op, int count, std::size_t n, int calls, void* capture,
                     std::size_t segments);

  /// From now on, reduce() and atomic_max_apply() have the runner copy the input on the lab's
  /// stream right before each call (Request::stage_input): a lab that works on another stream
  /// reads a poisoned or half-copied input.
  void set_stage_inputs(bool on) { stage_inputs_ = on; }

  /// Starts the runner now, if none runs, instead of at the first call: a checker does so before
  /// it creates its own CUDA context, so that the two processes make theirs at the same time.
  void start_early();

  /// Stops the runner (it is started again by the next call).
  void stop();

  /// Tells the runner to exit and returns without waiting: its exit (freeing its memory and
  /// context) overlaps whatever the caller does next. stop() or the next call waits for it.
  void begin_stop();

  /// From now on runners start with RunnerOptions::repetition_prefixes[\p repetition] after
  /// the prefix; the runner of an earlier repetition is stopped. Repetitions beyond the list
  /// add nothing.
  void begin_repetition(int repetition);

  /// From now on every request calls RunnerOptions::libraries[\p index] (0 at first). The runner
  /// keeps running: a library is loaded by the first request that names it.
  void use_library(std::size_t index);

  /// Runners started so far (1 + restarts).
  int starts() const { return starts_; }

  /// Runners started so far by every LabRunner of this process: each is a CUDA context.
  static int process_starts();

 private:
  struct Guarded;      // a checker-owned device buffer with guard bytes
  struct Exiting;      // a runner told to exit, not yet waited for
  struct ReportDrain;  // a sanitizer's report pipe, drained into the grader's logs
  struct TiledCopy;    // a tiled input's tiles, copied where the runner can map them

  Reply request(Request& rq);
  void start();
  void park_runner();  // begin_stop(), then keep the runner in exiting_ until stop() waits
  [[noreturn]] void fail(const std::string& what);
  BufferRef ref(const void* device_ptr, std::size_t bytes, bool persistent) const;
  /// Fills \p out for the tiled input \p in (a pointer into \p range); the copies it returns
  /// must live until the runner has answered.
  std::unique_ptr<TiledCopy> tiled_ref(const TiledRange& range, const float* in,
                                       TiledRef& out) const;
  void check_guards(const std::string& op, std::size_t n);
  /// A kRun request of operation \p index: the output (\p result_bytes) and the workspace
  /// (\p workspace_bytes) guarded, armed and referenced, \p calls calls on \p inputs inputs.
  Request armed_run(int index, std::size_t n, std::size_t calls, std::size_t inputs,
                    std::size_t result_bytes, std::size_t workspace_bytes);
  void ensure_workspace(std::size_t bytes);
  /// One untimed call of \p op (reduce() and reduce_segments(): segments = 0 and no offsets for
  /// a one-result operation) in the runner; its result is copied to \p out on \p stream.
  void call_once(const std::string& op, const float* in, std::size_t n, const std::int64_t* offsets,
                 std::size_t segments, void* out, cudaStream_t stream);
  /// A guarded buffer \p slot (the output or the capture) of at least \p bytes.
  void ensure_buffer(std::unique_ptr<Guarded>& slot, std::size_t bytes, std::size_t front_guard);
  int op_index(const std::string& op) const;

  RunnerOptions options_;
  std::mutex mutex_;
  std::unique_ptr<ChildProcess> child_;  // the runner now running, if any; drains its output
  int socket_ = -1;
  int starts_ = 0;
  int repetition_ = 0;            // the entry of repetition_prefixes in use
  std::uint32_t library_ = 0;     // the entry of RunnerOptions::libraries requests call
  double started_ms_ = 0;         // when the runner now running was started
  double stop_begun_ms_ = 0;      // when it was told to exit (begin_stop)
  bool first_reply_due_ = false;  // it has not answered yet (its start-up is timed to then)
  std::unique_ptr<ReportDrain> report_;
  std::unique_ptr<Guarded> out_, workspace_, capture_;
  // Workspaces outgrown while the runner may still map them: freed once a request with
  // Request::forget_buffers has been answered (or the runner stopped), never before.
  std::vector<std::unique_ptr<Guarded>> retired_;
  std::vector<std::unique_ptr<Exiting>> exiting_;  // parked by begin_repetition()
  std::vector<void*> timed_inputs_;                // the runner's inputs, mapped here
  std::int64_t* timed_offsets_ = nullptr;          // the runner's offsets, mapped here
  std::size_t timed_bytes_ = 0;                    // what timed_input_bytes() says
  bool stage_inputs_ = false;
  std::string capture_key_;  // the IPC handle of run_timed()'s last capture buffer
};

}  // namespace reduce::runner
