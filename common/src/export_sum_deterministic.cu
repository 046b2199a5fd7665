// A lab's deterministic sum implements the sum contract: export it like any sum.
#include "export_sum.cu"
