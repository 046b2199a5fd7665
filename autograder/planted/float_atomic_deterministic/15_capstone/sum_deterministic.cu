// The capstone's fast kernel passed off as its deterministic mode: above one block, each block
// atomicAdds its partial into the output, so the order of the additions (and the bits of the
// result) depends on which blocks finish first.
#include "capstone.cuh"

namespace reduce {

std::size_t sum_workspace_bytes(std::size_t n) {
  return capstone::workspace_bytes(n);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  using capstone::Strategy;
  const Strategy strategy =
      n <= capstone::kSingleBlockMaxDeterministic ? Strategy::kSingleBlock : Strategy::kAtomic;
  capstone::run(in, n, out, workspace, stream, strategy);
}

}  // namespace reduce
