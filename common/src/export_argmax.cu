// Added to every lab library that implements argmax (see export_sum.cu).
#include <reduce/lab_entry_points.cuh>

extern "C" const reduce::ArgmaxLab* reduce_argmax_lab() {
  static const reduce::ArgmaxLab lab{&reduce::argmax_workspace_bytes, &reduce::argmax};
  return &lab;
}
