// The lab contract (common/include/reduce/lab.cuh) as a checker process sees it: every entry
// point forwards to the lab runner of this process (LabRunner::of_process()). Test suites
// link this instead of a lab library, so they are built once for every lab and never share a
// process with the code they judge. The workspace a test passes is not handed on: the lab gets
// a guarded workspace of exactly the size it asked for.
#include <reduce/lab_entry_points.cuh>
#include <reduce_runner/lab_runner.hpp>

namespace reduce {
namespace {

runner::LabRunner& lab() {
  return runner::LabRunner::of_process();
}

}  // namespace

// One forwarding definition per entry point of the catalogue, shaped by its result kind: a
// reduction writes one Out (a float, or argmax's index); atomic_max_apply updates in place; a
// segmented reduction writes one float per segment.
#define REDUCE_FORWARD_REDUCTION(entry, Out)                                             \
  std::size_t entry##_workspace_bytes(std::size_t n) {                                   \
    return lab().workspace_bytes(#entry, n);                                             \
  }                                                                                      \
  void entry(const float* in, std::size_t n, Out* out, Workspace, cudaStream_t stream) { \
    lab().reduce(#entry, in, n, out, stream);                                            \
  }
#define REDUCE_FORWARD_FloatLab(entry) REDUCE_FORWARD_REDUCTION(entry, float)
#define REDUCE_FORWARD_ArgmaxLab(entry) REDUCE_FORWARD_REDUCTION(entry, std::int64_t)
#define REDUCE_FORWARD_AtomicMaxLab(entry)                                          \
  void entry(const float* values, std::size_t n, float* address, float* old_values, \
             cudaStream_t stream) {                                                 \
    lab().atomic_max_apply(values, n, address, old_values, stream);                 \
  }
#define REDUCE_FORWARD_SegmentedLab(entry)                                                      \
  std::size_t entry##_workspace_bytes(std::size_t n, std::size_t segments) {                    \
    return lab().workspace_bytes(#entry, n, segments);                                          \
  }                                                                                             \
  void entry(const float* in, std::size_t n, const std::int64_t* offsets, std::size_t segments, \
             float* out, Workspace, cudaStream_t stream) {                                      \
    lab().reduce_segments(#entry, in, n, offsets, segments, out, stream);                       \
  }
#define REDUCE_ENTRY(entry, getter, kind, table) REDUCE_FORWARD_##table(entry)
#include <reduce/course_entries.inc>
#undef REDUCE_ENTRY

}  // namespace reduce
