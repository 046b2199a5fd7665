// Added to every lab library that implements minimum (see export_sum.cu).
#include <reduce/lab_entry_points.cuh>

extern "C" const reduce::FloatLab* reduce_minimum_lab() {
  static const reduce::FloatLab lab{&reduce::minimum_workspace_bytes, &reduce::minimum};
  return &lab;
}
