/// \file
/// \brief How a process that loads several lab libraries finds their entry points: the function
/// tables of each operation and the C names every lab library exports
/// (`common/src/export_<op>.cu`). The lab runner, the tests and the benchmark use this; a lab
/// never needs it.
#pragma once

#include <reduce/lab.cuh>

namespace reduce {

/// The entry points of one lab for an operation whose result is one float.
struct FloatLab {
  std::size_t (*workspace_bytes)(std::size_t n);                           ///< *_workspace_bytes
  void (*run)(const float*, std::size_t, float*, Workspace, cudaStream_t);  ///< the operation
};

/// The argmax entry points of one lab.
struct ArgmaxLab {
  std::size_t (*workspace_bytes)(std::size_t n);                                   ///< argmax_workspace_bytes
  void (*run)(const float*, std::size_t, std::int64_t*, Workspace, cudaStream_t);  ///< argmax
};

/// The entry point of lab 14's atomic_max.
struct AtomicMaxLab {
  void (*apply)(const float*, std::size_t, float*, float*, cudaStream_t);  ///< atomic_max_apply
};

/// Kept for readers of lesson 01-09: the sum entry points.
using SumLab = FloatLab;

}  // namespace reduce

/// Exported by every lab library, one per operation it implements (`common/src/export_<op>.cu`);
/// the lab runner and the benchmark find a lab's entry points through these C names.
extern "C" {
const reduce::FloatLab* reduce_sum_lab();
const reduce::FloatLab* reduce_maximum_lab();    ///< maximum() of this lab library
const reduce::FloatLab* reduce_minimum_lab();    ///< minimum() of this lab library
const reduce::FloatLab* reduce_product_lab();    ///< product() of this lab library
const reduce::FloatLab* reduce_mean_lab();       ///< mean() of this lab library
const reduce::ArgmaxLab* reduce_argmax_lab();   ///< argmax() of this lab library
const reduce::AtomicMaxLab* reduce_atomic_max_lab();  ///< atomic_max_apply() of this lab library
}
