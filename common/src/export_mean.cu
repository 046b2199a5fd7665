// Added to every lab library that implements mean (see export_sum.cu).
#include <reduce/lab_entry_points.cuh>

extern "C" const reduce::FloatLab* reduce_mean_lab() {
  static const reduce::FloatLab lab{&reduce::mean_workspace_bytes, &reduce::mean};
  return &lab;
}
