// Added to every lab library that implements sum, so that a benchmark can load several labs into
// one process (dlopen) and find each one's entry points by a C name.
#include <reduce/lab_entry_points.cuh>

extern "C" const reduce::FloatLab* reduce_sum_lab() {
  static const reduce::FloatLab lab{&reduce::sum_workspace_bytes, &reduce::sum};
  return &lab;
}
