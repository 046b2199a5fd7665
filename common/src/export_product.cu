// Added to every lab library that implements product (see export_sum.cu).
#include <reduce/lab_entry_points.cuh>

extern "C" const reduce::FloatLab* reduce_product_lab() {
  static const reduce::FloatLab lab{&reduce::product_workspace_bytes, &reduce::product};
  return &lab;
}
