// Added to every lab library that implements maximum (see export_sum.cu).
#include <reduce/lab_entry_points.cuh>

extern "C" const reduce::FloatLab* reduce_maximum_lab() {
  static const reduce::FloatLab lab{&reduce::maximum_workspace_bytes, &reduce::maximum};
  return &lab;
}
