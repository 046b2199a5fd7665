// The same rung 9 as this case's sum.cu, built as the capstone's deterministic mode (rung 9 has
// no float atomics: one partial per block, then one block in index order).
#include "sum.cu"
