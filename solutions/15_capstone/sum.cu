// Capstone, fast mode: the fastest strategy for each size (see capstone.cuh), including one
// atomicAdd per block where that wins, so the bits of the result may vary from run to run.
#include "capstone.cuh"

namespace reduce {

namespace {

/// Measured on the H100 and the H200 (lesson 15): one block up to 2^15 floats, then one launch
/// with one atomicAdd per block, whose tail is shorter than a last-block combine or a second
/// launch.
capstone::Strategy strategy_for(std::size_t n) {
  using capstone::Strategy;
  Strategy strategy = n <= capstone::kSingleBlockMax ? Strategy::kSingleBlock : Strategy::kAtomic;
  capstone::forced_strategy(strategy);
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
