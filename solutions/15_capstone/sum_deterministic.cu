// Capstone, deterministic mode: the same bits on every run for the same input on the same GPU.
// The work per block is fixed by n and the GPU (even shares of whole tiles), every tree inside
// a block has a fixed shape, and the partials are combined in index order by one block: no
// float atomics anywhere.
#include "capstone.cuh"

namespace reduce {

namespace {

/// One block up to 2^16 floats, then one launch that ends in a last-block combine.
capstone::Strategy strategy_for(std::size_t n) {
  using capstone::Strategy;
  Strategy strategy =
      n <= capstone::kSingleBlockMaxDeterministic ? Strategy::kSingleBlock : Strategy::kLastBlock;
  if (capstone::forced_strategy(strategy) && strategy == Strategy::kAtomic) {
    strategy = Strategy::kLastBlock;  // the atomic strategy is not deterministic
  }
  return strategy;
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return capstone::workspace_bytes(n, strategy_for(n));
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  capstone::run(in, n, out, workspace, stream, strategy_for(n));
}

}  // namespace reduce
