/// \file
/// \brief How a process that loads several lab libraries finds their entry points: the function
/// tables of each operation and the C names every lab library exports
/// (`export_<op>.cu`, generated from course.json). The lab runner, the tests and the benchmark use
/// this; a lab never needs it.
#pragma once

#include <reduce/lab.cuh>

namespace reduce {

/// The entry points of one lab for an operation whose result is one float.
struct FloatLab {
  std::size_t (*workspace_bytes)(std::size_t n);                            ///< *_workspace_bytes
  void (*run)(const float*, std::size_t, float*, Workspace, cudaStream_t);  ///< the operation
};

/// The argmax entry points of one lab.
struct ArgmaxLab {
  std::size_t (*workspace_bytes)(std::size_t n);  ///< argmax_workspace_bytes
  void (*run)(const float*, std::size_t, std::int64_t*, Workspace, cudaStream_t);  ///< argmax
};

/// The entry point of lab 14's atomic_max.
struct AtomicMaxLab {
  void (*apply)(const float*, std::size_t, float*, float*, cudaStream_t);  ///< atomic_max_apply
};

/// The entry points of one lab for a segmented reduction: one float per segment (lab 17).
struct SegmentedLab {
  std::size_t (*workspace_bytes)(std::size_t n, std::size_t segments);  ///< *_workspace_bytes
  void (*run)(const float*, std::size_t, const std::int64_t*, std::size_t, float*, Workspace,
              cudaStream_t);  ///< the operation
};

/// Kept for readers of lesson 01-09: the sum entry points.
using SumLab = FloatLab;

}  // namespace reduce

/// Exported by every lab library, one per operation it implements (`export_<op>.cu`, generated
/// from course.json); the lab runner and the benchmark find a lab's entry points through these
/// C names, e.g. `const reduce::FloatLab* reduce_sum_lab();`.
extern "C" {
#define REDUCE_ENTRY(entry, getter, kind, table) const reduce::table* getter();
#include <reduce/course_entries.inc>
#undef REDUCE_ENTRY
}
